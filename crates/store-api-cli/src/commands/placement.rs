//! `placement fit`: the largest aspect-preserving placement of an image in a print area.

use serde::Serialize;
use store_api::Client;
use store_api::validate::{Align, ImageSize, Placement, PrintArea};

use crate::cli::{AlignArg, FitArgs, PlacementCommand};
use crate::error::CliError;
use crate::output::{Output, fields, joined};

/// The placement fields of a decoration, as the API names them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementFields {
    /// Width, inches.
    pub physical_width: f64,
    /// Height, inches.
    pub physical_height: f64,
    /// Offset from the vertical center line, inches.
    pub horizontal_offset_from_center: f64,
    /// Offset from the top edge, inches.
    pub vertical_offset_from_top: f64,
}

impl PlacementFields {
    /// The placement rounded to 1/10000 inch (no float noise in the JSON), unless rounding would
    /// take it out of the print area.
    fn new(placement: Placement, area: PrintArea) -> Self {
        let round = |inches: f64| (inches * 10_000.0).round() / 10_000.0;
        let rounded = Placement {
            width: round(placement.width),
            height: round(placement.height),
            horizontal_offset_from_center: round(placement.horizontal_offset_from_center),
            vertical_offset_from_top: round(placement.vertical_offset_from_top),
        };
        let p = if rounded.check(area).is_ok() {
            rounded
        } else {
            placement
        };
        PlacementFields {
            physical_width: p.width,
            physical_height: p.height,
            horizontal_offset_from_center: p.horizontal_offset_from_center,
            vertical_offset_from_top: p.vertical_offset_from_top,
        }
    }
}

/// Runs a `placement` subcommand.
pub async fn run(command: PlacementCommand, client: &Client, out: Output) -> Result<(), CliError> {
    let PlacementCommand::Fit(args) = command;
    fit(client, &args, out).await
}

async fn fit(client: &Client, args: &FitArgs, out: Output) -> Result<(), CliError> {
    let blank = client.catalog().get(&args.catalog_product).await?;
    let location = blank
        .decoration_locations
        .iter()
        .find(|l| l.decoration_location.as_deref() == Some(args.location.as_str()))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{} has no location {:?}; it has: {}",
                blank.id,
                args.location,
                joined(
                    blank
                        .decoration_locations
                        .iter()
                        .filter_map(|l| l.decoration_location.as_deref())
                )
            ))
        })?;
    let area = PrintArea::from(location);
    let align = match args.align {
        AlignArg::Top => Align::Top,
        AlignArg::Center => Align::Center,
    };
    let (width_px, height_px) = args.image_px;
    let placement =
        Placement::fit(area, ImageSize::new(width_px, height_px), align).ok_or_else(|| {
            CliError::Usage(format!(
                "nothing fits: the print area of {} is {} x {} in",
                args.location, area.width, area.height
            ))
        })?;
    let decoration = PlacementFields::new(placement, area);
    out.json(&decoration)?;
    out.table(&fields([
        (
            "blank",
            format!("{} {}", blank.id, blank.name.as_deref().unwrap_or("")),
        ),
        (
            "print area",
            format!("{} {} x {} in", args.location, area.width, area.height),
        ),
        ("methods there", joined(&location.decoration_methods)),
        ("image", format!("{width_px} x {height_px} px")),
        (
            "placement",
            format!(
                "{:.3} x {:.3} in, {:.3} in from the top, {:.3} in from the center line",
                placement.width,
                placement.height,
                placement.vertical_offset_from_top,
                placement.horizontal_offset_from_center
            ),
        ),
        (
            "resolution",
            format!("{:.0} dpi", f64::from(width_px) / placement.width),
        ),
    ]));
    let snippet = serde_json::to_string(&decoration)
        .map_err(|e| CliError::Failed(format!("cannot encode the placement: {e}")))?;
    out.line(format!("decoration fields: {snippet}"));
    Ok(())
}
