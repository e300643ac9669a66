//! `demo`: the whole API in eight steps on the embedded emulator, with no set-up. Each step prints
//! one line or a small table; the real rate limit stays on.

mod receiver;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use store_api::model::{DecorationMethod, FulfillmentStatus};
use store_api::validate::{Align, ImageSize, OrderContext as _, Placement, PrintArea};
use store_api::{
    AddressLines, Client, CustomItem, Design, Error, IdentifiedOrder, ListCatalogProductsQuery,
    OrderBuilder, ShipTo, ShipToAddress, Submitted, new_external_order_id,
};
use store_api_fixtures::Emulator;
use store_api_webhooks::{Topic, sign};

use self::receiver::Receiver;
use crate::error::CliError;
use crate::output::{Output, joined, or_dash, table, usd};
use crate::render::ladder_text;
use crate::{png, session};

const BLANK_VARIANT: &str = "cv_3001_blk_m";
const LOCATION: &str = "front";
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the demo and prints what each step did.
pub async fn run() -> Result<(), CliError> {
    // The demo speaks to people: tables and lines even with --json.
    let out = Output { json: false };
    let started = Instant::now();
    let emulator = session::start(
        Emulator::builder()
            .network_downloads(false)
            .webhook_backoff(Duration::from_millis(100)),
    )
    .await?;
    let client = session::emulator_client(&emulator)?;
    eprintln!(
        "using the embedded emulator at {}, store {} — not the real service (rate limit on: a burst of 10, then 2 requests/s)",
        emulator.origin(),
        client.store_id()
    );
    let result = steps(&emulator, &client, out).await;
    emulator.shutdown().await;
    result?;
    out.line(format!("done in {:.2} s", started.elapsed().as_secs_f64()));
    Ok(())
}

async fn steps(emulator: &Emulator, client: &Client, out: Output) -> Result<(), CliError> {
    let store_id = client.store_id().to_owned();

    // 1. Reachability and credentials.
    let status = client.status().await?;
    out.line(format!(
        "1. status: {} — API version {}, key accepted for store {}",
        or_dash(status.status.as_deref()),
        or_dash(status.version.as_deref()),
        or_dash(status.store.as_ref().map(|s| s.id.as_str()))
    ));

    // 2. A few blanks.
    let page = client
        .catalog()
        .list(&ListCatalogProductsQuery::new().limit(4))
        .await?;
    out.line(format!(
        "2. catalog: {} blanks available to the store; the first {}:",
        page.total_items,
        page.items.len()
    ));
    let mut blanks = table(&["ID", "NAME", "TYPE", "LOCATIONS"]);
    for blank in &page.items {
        blanks.add_row(vec![
            blank.id.clone(),
            or_dash(blank.name.as_deref()),
            or_dash(blank.product_type.as_deref()),
            joined(
                blank
                    .decoration_locations
                    .iter()
                    .filter_map(|l| l.decoration_location.as_deref()),
            ),
        ]);
    }
    out.table(&blanks);

    // 3. Artwork from a fake public host; its pixel size comes from the PNG's own header.
    let image = session::SAMPLE_PNG;
    let (width_px, height_px) = png::dimensions(image)
        .ok_or_else(|| CliError::Failed("the sample image is not a PNG".into()))?;
    let artwork = client
        .artworks()
        .create("Sunset", session::SAMPLE_IMAGE_URL)
        .await?;
    out.line(format!(
        "3. artwork: {} serves a {width_px}x{height_px} PNG ({} bytes; size read from its IHDR), uploaded as artwork {}",
        session::SAMPLE_IMAGE_URL,
        image.len(),
        artwork.id
    ));

    // 4. A custom line item placed with Placement::fit, from the catalog copy pre-flight uses.
    let snapshot = client.store_snapshot().await?;
    let (blank, variant) = snapshot
        .catalog_variant(BLANK_VARIANT)
        .ok_or_else(|| CliError::Failed(format!("the catalog has no {BLANK_VARIANT}")))?;
    let location = blank
        .decoration_locations
        .iter()
        .find(|l| l.decoration_location.as_deref() == Some(LOCATION))
        .ok_or_else(|| CliError::Failed(format!("{} has no {LOCATION}", blank.id)))?;
    let area = PrintArea::from(location);
    let placement = Placement::fit(area, ImageSize::new(width_px, height_px), Align::Top)
        .ok_or_else(|| CliError::Failed("the image does not fit the print area".into()))?;
    // The id of step 7's order, made with it: the builder takes it up front.
    let external_id = new_external_order_id();
    let order = custom_order(&external_id, &artwork.id, placement)?;
    out.line(format!(
        "4. custom line item: {} ({}, {BLANK_VARIANT}), {LOCATION} print area {} x {} in, direct_to_garment; Placement::fit gives {} x {} in against the top, aspect ratio kept",
        or_dash(blank.name.as_deref()),
        or_dash(variant.name.as_deref()),
        area.width,
        area.height,
        placement.width,
        placement.height
    ));

    // 5. Pre-flight catches a design too large for the area, before any order request.
    let too_large = Placement {
        width: placement.width * 1.25,
        height: placement.height * 1.25,
        ..placement
    };
    let wrong = custom_order(&new_external_order_id(), &artwork.id, too_large)?;
    out.line(format!(
        "5. pre-flight: a {} x {} in design on the same area is refused locally, no order sent:",
        too_large.width, too_large.height
    ));
    match client.orders().preflight(wrong.as_request()).await {
        Err(Error::Invalid { violations }) => {
            for violation in violations {
                out.line(format!("   {}: {}", violation.path, violation.message()));
            }
        }
        Err(other) => return Err(other.into()),
        Ok(()) => {
            return Err(CliError::Failed(
                "the pre-flight check let a design larger than the print area through".into(),
            ));
        }
    }

    // 6. A webhook receiver, registered before the order so that orders_create reaches it.
    let key = emulator
        .store(&store_id)
        .map(|s| s.api_key)
        .ok_or_else(|| CliError::Failed(format!("the emulator has no store {store_id}")))?;
    let mut receiver = Receiver::start(&key).await?;
    let topics = [Topic::OrdersCreate, Topic::OrdersUpdate];
    emulator
        .set_webhooks(
            &store_id,
            topics
                .iter()
                .map(|t| (t.as_str().to_owned(), receiver.url.clone()))
                .collect::<BTreeMap<_, _>>(),
        )
        .map_err(|e| CliError::Failed(e.to_string()))?;
    let forged = forged_delivery_status(&receiver.url, &store_id).await;
    out.line(format!(
        "6. webhooks: axum receiver at {} (VerifiedEvent) registered for orders_create and orders_update; a delivery signed with another key gets {}",
        receiver.url,
        or_dash(forged)
    ));

    // 7. Exactly once: Created, then the same request again after a "lost response": 409, AlreadyExisted.
    let first = client.orders().submit(&order).await?;
    let created = match &first.submitted {
        Submitted::Created(order) => order.clone(),
        _ => {
            return Err(CliError::Failed(
                "the first submission did not create the order".into(),
            ));
        }
    };
    out.line(format!(
        "7. submit: externalOrderId {external_id} → Submitted::Created {} ({}), total {} USD, {} attempt(s)",
        created.id,
        or_dash(created.name.as_deref()),
        usd(created.total_cost),
        first.attempts.len()
    ));
    let again = client.orders().submit(&order).await?;
    let existing = match &again.submitted {
        Submitted::AlreadyExisted(order) => order.clone(),
        _ => return Err(CliError::Failed("the retry created a second order".into())),
    };
    out.line(format!(
        "   response lost (simulated), the same request again → 409 → Submitted::AlreadyExisted {} (same order: {}; the store holds {} order)",
        existing.id,
        if existing.id == created.id { "yes" } else { "NO" },
        emulator.order_count(&store_id)
    ));
    let event = receiver.next(&Topic::OrdersCreate, EVENT_TIMEOUT).await?;
    out.line(format!(
        "   webhook {} {} for {}: signature verified",
        event.topic, event.id, event.data.id
    ));

    // 8. The provider moves the order up the ladder; each move is an orders_update delivery.
    out.line("8. fulfillment ladder:");
    out.line(format!(
        "   {}",
        ladder_text(created.fulfillment_status.as_ref())
    ));
    loop {
        let moved = emulator
            .advance_order(&store_id, &created.id)
            .map_err(|e| CliError::Failed(e.to_string()))?;
        let event = receiver.next(&Topic::OrdersUpdate, EVENT_TIMEOUT).await?;
        out.line(format!(
            "   {} (webhook {} {}: signature verified)",
            ladder_text(moved.fulfillment_status.as_ref()),
            event.topic,
            event.id
        ));
        if moved.fulfillment_status == Some(FulfillmentStatus::Fulfilled) {
            break;
        }
    }
    let fulfilled = client.orders().get(&created.id).await?;
    let tracking = fulfilled.tracking_info.as_ref().map(|t| {
        format!(
            "{} {} {}",
            or_dash(t.carrier.as_deref()),
            or_dash(t.tracking_number.as_deref()),
            or_dash(t.tracking_url.as_deref())
        )
    });
    out.line(format!(
        "   status {}, tracking: {}",
        or_dash(fulfilled.status.as_ref()),
        or_dash(tracking)
    ));
    Ok(())
}

/// One custom line item on the demo blank with the artwork at `placement`, shipped to a US address.
/// The placement is not checked against the print area here: step 5 shows the pre-flight refusing it.
fn custom_order(
    external_id: &str,
    artwork_id: &str,
    placement: Placement,
) -> Result<IdentifiedOrder, CliError> {
    let failed = |e: store_api::BuildError| CliError::Failed(format!("the demo order: {e}"));
    let ship_to = ShipTo::new(
        "Ada",
        "Lovelace",
        ShipToAddress::new(AddressLines {
            street_address: "1 Main St",
            city_or_town: "Austin",
            state_or_province: "TX",
            postal_code: "78701",
            country: "US",
        })
        .map_err(failed)?,
    )
    .map_err(failed)?;
    let design = Design::new(artwork_id, LOCATION, DecorationMethod::DirectToGarment).at(placement);
    OrderBuilder::new(external_id, ship_to)
        .and_then(|order| {
            order
                .custom(CustomItem::new(BLANK_VARIANT).design(design))
                .build()
        })
        .map_err(failed)
}

/// What the receiver answers to a well-formed event signed with a key that is not the store's.
async fn forged_delivery_status(url: &str, store_id: &str) -> Option<u16> {
    let body = serde_json::json!({
        "id": "evt_forged",
        "storeId": store_id,
        "topic": "orders_update",
        "data": { "id": "ord_forged" }
    })
    .to_string();
    let http = reqwest::Client::builder().no_proxy().build().ok()?;
    let response = http
        .post(url)
        .header("content-type", "application/json")
        .header(
            store_api_webhooks::SIGNATURE_HEADER,
            sign("csk_00000000000000000000000000000000", body.as_bytes()),
        )
        .body(body)
        .send()
        .await
        .ok()?;
    Some(response.status().as_u16())
}
