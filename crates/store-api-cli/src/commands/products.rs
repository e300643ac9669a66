//! `products list|get`: the store's products, read-only.

use store_api::model::ProductStatus;
use store_api::{Client, ListProductsQuery};

use super::listing::{Listed, Paged as _, every_page};
use crate::cli::ProductsCommand;
use crate::error::CliError;
use crate::output::Output;
use crate::render;

/// Runs a `products` subcommand.
pub async fn run(command: ProductsCommand, client: &Client, out: Output) -> Result<(), CliError> {
    match command {
        ProductsCommand::List(args) => {
            let query = ListProductsQuery::new()
                .status(args.status.iter().map(|s| ProductStatus::from(s.as_str())))
                .paged(&args.paging);
            let listed = if args.paging.all {
                every_page(client.products().stream(&query), out, "product").await?
            } else {
                Listed::page(client.products().list(&query).await?, "product")
            };
            listed.show(out, render::product_list)?;
        }
        ProductsCommand::Get { id } => {
            let product = client.products().get(&id).await?;
            out.json(&product)?;
            let (summary, variants) = render::product_detail(&product);
            out.table(&summary);
            out.line("variants:");
            out.table(&variants);
        }
    }
    Ok(())
}
