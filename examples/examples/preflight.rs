//! The service's order rules run locally with `store-api-rules`: where a design fits on a blank
//! ([`Placement::fit`]), and every violation of an order found before it is sent ([`validate_order`]
//! against the store's snapshot), with the service's own messages and wire paths.
//!
//! `cargo run -p store-api-examples --example preflight` reads the Bella+Canvas 3001 blank's front print
//! area from the service named by `STORE_API_KEY`, `STORE_API_STORE_ID` and `STORE_API_BASE_URL`
//! ([`Client::from_env`]), fits the artwork `ARTWORK_ID` (3000 x 2400 px) on it, and prints what the
//! rules say about that order and about a broken one. It places no order. `cargo test -p
//! store-api-examples --example preflight` runs the same functions against an in-process emulator and
//! places the valid order, then checks that the broken one never reached the service.
//!
//! `store_api::Orders::submit` runs this same check before every submission; call the rules yourself to
//! check an order in a form, a batch or a store of your own (implement `OrderContext`).

use std::error::Error;

use store_api::model::DecorationMethod;
use store_api::{
    AddressLines, Client, CustomItem, Design, IdentifiedOrder, OrderBuilder, ShipTo, ShipToAddress,
};
use store_api_rules::{Align, ImageSize, Placement, PrintArea, Violation, validate_order};

/// The blank of the seed's tee (Bella+Canvas 3001) and its black M variant.
const BLANK: &str = "cp_bc3001";
const BLANK_VARIANT: &str = "cv_3001_blk_m";

/// The blank's front print area, and the largest placement of an image of `image`'s pixels in it,
/// aspect ratio kept, against the top edge.
async fn front_placement(
    client: &Client,
    image: ImageSize,
) -> Result<(PrintArea, Placement), Box<dyn Error>> {
    let blank = client.catalog().get(BLANK).await?;
    let front = blank
        .decoration_locations
        .iter()
        .find(|location| location.decoration_location.as_deref() == Some("front"))
        .ok_or("the blank has no front print location")?;
    let area = PrintArea::from(front);
    let placement =
        Placement::fit(area, image, Align::Top).ok_or("an empty image or print area")?;
    Ok((area, placement))
}

/// A black M tee with `artwork_id` printed on its front at `placement`, shipped to Austin; `extra_sku`
/// adds a line item of the store's products by SKU.
fn tee_with_design(
    external_id: &str,
    artwork_id: &str,
    placement: Placement,
    extra_sku: Option<&str>,
) -> Result<IdentifiedOrder, store_api::BuildError> {
    let address = ShipToAddress::new(AddressLines {
        street_address: "1 Main St",
        city_or_town: "Austin",
        state_or_province: "TX",
        postal_code: "78701",
        country: "US",
    })?;
    let design = Design::new(artwork_id, "front", DecorationMethod::DirectToGarment).at(placement);
    let mut builder = OrderBuilder::new(external_id, ShipTo::new("Ada", "Lovelace", address)?)?
        .custom(CustomItem::new(BLANK_VARIANT).design(design));
    if let Some(sku) = extra_sku {
        builder = builder.sku(sku, 1);
    }
    builder.build()
}

/// Every violation of `order` in the store, found locally: the order is not sent (the store's copy is
/// read once and cached by the client). Empty when the service would accept it as far as can be
/// known without sending it.
async fn preflight(
    client: &Client,
    order: &IdentifiedOrder,
) -> Result<Vec<Violation>, store_api::Error> {
    let snapshot = client.store_snapshot().await?;
    Ok(validate_order(order.as_request(), &*snapshot)
        .err()
        .unwrap_or_default())
}

/// Prints each violation as the service would word it, with its wire path.
fn report(label: &str, violations: &[Violation]) {
    if violations.is_empty() {
        println!("{label}: valid");
    }
    for violation in violations {
        println!("{label}: {} ({})", violation.message(), violation.path);
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let client = Client::from_env()?;
    let artwork_id =
        std::env::var("ARTWORK_ID").map_err(|_| "set ARTWORK_ID to an artwork's id")?;
    let (area, placement) = front_placement(&client, ImageSize::new(3000, 2400)).await?;
    println!("front print area {} x {} in", area.width, area.height);
    println!("fitted design {placement:?}");

    let fitted = tee_with_design("preflight-fitted", &artwork_id, placement, None)?;
    report("fitted", &preflight(&client, &fitted).await?);
    // Moved down by hand past the bottom edge, and an item the store does not sell.
    let moved = Placement {
        vertical_offset_from_top: placement.vertical_offset_from_top + 8.0,
        ..placement
    };
    let broken = tee_with_design("preflight-broken", &artwork_id, moved, Some("NO-SUCH-SKU"))?;
    report("broken", &preflight(&client, &broken).await?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use store_api::{RateLimiter, Submitted};
    use store_api_fixtures::Emulator;
    use store_api_fixtures::artwork::SAMPLE_IMAGE_URL;
    use store_api_rules::ViolationKind;

    use super::*;

    #[tokio::test]
    async fn fits_the_design_and_refuses_the_broken_order_before_sending_it() {
        let emu = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false)
            .sample_artwork(true) // serves the 3000 x 2400 px sample image at SAMPLE_IMAGE_URL
            .start()
            .await
            .unwrap();
        let store = emu.store("store_alpha").unwrap();
        let client = Client::builder()
            .base_url(emu.base_url())
            .store_id(&store.id)
            .api_key(store.api_key)
            .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
            .build()
            .unwrap();
        let artwork = client
            .artworks()
            .create("sunset", SAMPLE_IMAGE_URL)
            .await
            .unwrap();

        // 3000 x 2400 px on a 12 x 16 in front: as wide as the area, its height in proportion.
        let (area, placement) = front_placement(&client, ImageSize::new(3000, 2400))
            .await
            .unwrap();
        assert_eq!((area.width, area.height), (12.0, 16.0));
        assert_eq!((placement.width, placement.height), (12.0, 9.6));
        assert_eq!(placement.vertical_offset_from_top, 0.0);

        let fitted = tee_with_design("preflight-1", &artwork.id, placement, None).unwrap();
        assert_eq!(preflight(&client, &fitted).await.unwrap(), vec![]);
        let placed = client.orders().submit(&fitted).await.unwrap();
        assert!(matches!(placed.submitted, Submitted::Created(_)));

        let moved = Placement {
            vertical_offset_from_top: 8.0,
            ..placement
        };
        let broken =
            tee_with_design("preflight-2", &artwork.id, moved, Some("NO-SUCH-SKU")).unwrap();
        let violations = preflight(&client, &broken).await.unwrap();
        let found: Vec<_> = violations
            .iter()
            .map(|violation| (violation.kind, violation.path.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    ViolationKind::DesignOutsidePrintArea,
                    "lineItems.0.decorations.0.verticalOffsetFromTop",
                ),
                (ViolationKind::ProductNotFound, "lineItems.1.sku"),
            ],
            "{violations:?}"
        );
        assert!(
            violations[1]
                .message()
                .starts_with("No product found in the store for a line item"),
            "{}",
            violations[1].message()
        );

        // `submit` runs the same check first: refused without a request, so one order exists.
        let refused = client.orders().submit(&broken).await.unwrap_err();
        assert!(
            matches!(refused, store_api::Error::Invalid { .. }),
            "{refused:?}"
        );
        assert_eq!(emu.order_count("store_alpha"), 1);
        let creates = emu.requests("store_alpha").unwrap();
        let creates = creates
            .iter()
            .filter(|request| request.method == "POST" && request.path.ends_with("/orders"));
        assert_eq!(creates.count(), 1, "the broken order was never sent");
    }
}
