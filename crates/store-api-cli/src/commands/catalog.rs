//! `catalog list|get`: the blanks available to the store.

use store_api::model::DecorationMethod;
use store_api::{Client, ListCatalogProductsQuery};

use super::listing::{Listed, Paged as _, every_page};
use crate::cli::CatalogCommand;
use crate::error::CliError;
use crate::output::Output;
use crate::render;

/// Runs a `catalog` subcommand.
pub async fn run(command: CatalogCommand, client: &Client, out: Output) -> Result<(), CliError> {
    match command {
        CatalogCommand::List(args) => {
            let query = ListCatalogProductsQuery::new()
                .product_type(args.product_type)
                .decoration_method(
                    args.method
                        .iter()
                        .map(|m| DecorationMethod::from(m.as_str())),
                )
                .paged(&args.paging);
            let listed = if args.paging.all {
                every_page(client.catalog().stream(&query), out, "blank").await?
            } else {
                Listed::page(client.catalog().list(&query).await?, "blank")
            };
            listed.show(out, render::catalog_list)?;
        }
        CatalogCommand::Get { id } => {
            let product = client.catalog().get(&id).await?;
            out.json(&product)?;
            let (summary, locations) = render::catalog_detail(&product);
            out.table(&summary);
            out.line("print locations:");
            out.table(&locations);
        }
    }
    Ok(())
}
