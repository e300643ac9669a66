//! `artworks create|list|get`.

use store_api::{Client, ListArtworksQuery};

use super::listing::{Listed, Paged as _, every_page};
use crate::cli::ArtworksCommand;
use crate::error::CliError;
use crate::output::Output;
use crate::render;

/// Runs an `artworks` subcommand.
pub async fn run(command: ArtworksCommand, client: &Client, out: Output) -> Result<(), CliError> {
    match command {
        ArtworksCommand::Create { name, url } => {
            // The URL and name rules are checked locally first: a refusal there is the service's 400.
            let artwork = client
                .artworks()
                .create(&name, &url)
                .await
                .map_err(|e| match e {
                    store_api::Error::InvalidArgument { message, .. } => CliError::Refused(message),
                    other => other.into(),
                })?;
            out.json(&artwork)?;
            out.line(format!("created artwork {}", artwork.id));
            out.table(&render::artwork_detail(&artwork));
        }
        ArtworksCommand::List { paging } => {
            let query = ListArtworksQuery::new().paged(&paging);
            let listed = if paging.all {
                every_page(client.artworks().stream(&query), out, "artwork").await?
            } else {
                Listed::page(client.artworks().list(&query).await?, "artwork")
            };
            listed.show(out, render::artwork_list)?;
        }
        ArtworksCommand::Get { id } => {
            let artwork = client.artworks().get(&id).await?;
            out.json(&artwork)?;
            out.table(&render::artwork_detail(&artwork));
        }
    }
    Ok(())
}
