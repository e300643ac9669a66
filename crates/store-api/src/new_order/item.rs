//! Line items printed on a blank: [`CustomItem`] and its [`Design`]s.

use store_api_raw::types;

use super::BuildError;
use crate::model::DecorationMethod;
use crate::validate::{Align, ImageSize, Placement, PrintArea};

/// A custom line item: a blank (catalog) variant with one or more [`Design`]s printed on it, assembled
/// at order time. One unit unless [`CustomItem::quantity`] says otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomItem {
    catalog_variant_id: String,
    quantity: u64,
    designs: Vec<Design>,
}

impl CustomItem {
    /// A custom item on the blank variant `catalog_product_variant_id` (a `CatalogVariant` id).
    pub fn new(catalog_product_variant_id: impl Into<String>) -> Self {
        Self {
            catalog_variant_id: catalog_product_variant_id.into(),
            quantity: 1,
            designs: Vec::new(),
        }
    }

    /// How many units (at least 1).
    pub fn quantity(mut self, quantity: u64) -> Self {
        self.quantity = quantity;
        self
    }

    /// Adds a design (a decoration).
    pub fn design(mut self, design: Design) -> Self {
        self.designs.push(design);
        self
    }

    /// The wire line item; errors name fields from the item (`quantity`, `decorations.0.physicalWidth`).
    pub(crate) fn to_input(&self) -> Result<types::LineItemInput, BuildError> {
        let mut item = types::LineItemInput::new(quantity(self.quantity)?);
        item.is_custom = true;
        item.catalog_product_variant_id = Some(self.catalog_variant_id.clone());
        item.decorations = self
            .designs
            .iter()
            .enumerate()
            .map(|(index, design)| {
                design
                    .to_decoration()
                    .map_err(|e| e.under(&format!("decorations.{index}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(item)
    }
}

/// A standard line item of `quantity` units of the store's variant with SKU `sku`.
pub(crate) fn sku_line(sku: &str, quantity: std::num::NonZeroU64) -> types::LineItemInput {
    let mut item = types::LineItemInput::new(quantity);
    item.sku = Some(sku.to_owned());
    item
}

/// A standard line item of `quantity` units of the store's product variant `variant_id`.
pub(crate) fn variant_line(
    variant_id: &str,
    quantity: std::num::NonZeroU64,
) -> types::LineItemInput {
    let mut item = types::LineItemInput::new(quantity);
    item.product_variant_id = Some(variant_id.to_owned());
    item
}

/// A line item's quantity: the wire type cannot carry 0.
pub(crate) fn quantity(quantity: u64) -> Result<std::num::NonZeroU64, BuildError> {
    std::num::NonZeroU64::new(quantity)
        .ok_or_else(|| BuildError::at("quantity", "must be at least 1"))
}

/// An artwork printed at a decoration location of the blank with a decoration method, and where it sits:
/// fitted into the print area ([`Design::fit`]), centered ([`Design::center`]) or at explicit offsets
/// ([`Design::at`]).
///
/// The print area is the blank's decoration location in the catalog
/// (`PrintArea::from(&location)`); the service refuses a design that does not fit in it (rule 5).
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    artwork_id: String,
    location: String,
    method: DecorationMethod,
    placement: Result<Option<Placement>, BuildError>,
    area: Option<PrintArea>,
}

impl Design {
    /// Artwork `artwork_id` at `decoration_location` (`front`, `left_chest`…) printed with `method`.
    pub fn new(
        artwork_id: impl Into<String>,
        decoration_location: impl Into<String>,
        method: DecorationMethod,
    ) -> Self {
        Self {
            artwork_id: artwork_id.into(),
            location: decoration_location.into(),
            method,
            placement: Ok(None),
            area: None,
        }
    }

    /// As large as `area` allows for an image of `image`'s size, keeping its aspect ratio
    /// ([`Placement::fit`]).
    pub fn fit(mut self, area: PrintArea, image: ImageSize, align: Align) -> Self {
        self.area = Some(area);
        self.placement = Placement::fit(area, image, align).map(Some).ok_or_else(|| {
            BuildError::at(
                "physicalWidth",
                format!(
                    "an image of {} x {} px cannot be fitted into a {} x {} in print area",
                    image.width_px, image.height_px, area.width, area.height
                ),
            )
        });
        self
    }

    /// `width` by `height` inches, centered both ways in `area` ([`Placement::center`]); a design that
    /// does not fit is refused, naming the dimension.
    pub fn center(mut self, area: PrintArea, width: f64, height: f64) -> Self {
        self.area = Some(area);
        // `center` says only that it cannot; checking the design at the top says which field is wrong.
        let unplaced = Placement {
            width,
            height,
            horizontal_offset_from_center: 0.0,
            vertical_offset_from_top: 0.0,
        };
        self.placement = Ok(Some(
            Placement::center(width, height, area).unwrap_or(unplaced),
        ));
        self
    }

    /// At an explicit size and offsets. Checked against the print area when [`Design::within`] gives
    /// it (the pre-flight check of [`Orders::submit`](crate::Orders::submit) does so with the catalog).
    pub fn at(mut self, placement: Placement) -> Self {
        self.placement = Ok(Some(placement));
        self
    }

    /// Checks the placement against `area` when the order is built.
    pub fn within(mut self, area: PrintArea) -> Self {
        self.area = Some(area);
        self
    }

    /// The wire decoration; errors name fields from the decoration (`physicalWidth`).
    fn to_decoration(&self) -> Result<types::Decoration, BuildError> {
        let placement = self.placement.clone()?.ok_or_else(|| {
            BuildError::at(
                "physicalWidth",
                "the design has no placement (use fit, center or at)",
            )
        })?;
        let checked = match self.area {
            Some(area) => placement.check(area),
            None => placement.number_errors().next().map_or(Ok(()), Err),
        };
        checked.map_err(|source| BuildError::Placement {
            field: source.field().to_owned(),
            source,
        })?;
        let mut decoration = types::Decoration::new(types::DecorationRequired {
            artwork_id: self.artwork_id.clone(),
            decoration_location: self.location.clone(),
            decoration_method: self.method.clone(),
            physical_height: placement.height,
            physical_width: placement.width,
        });
        placement.apply_to(&mut decoration);
        Ok(decoration)
    }
}
