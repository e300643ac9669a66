//! One module per command group; [`run`] sends a parsed command line to it.

mod api;
mod artworks;
mod catalog;
mod completions;
mod doctor;
mod emulator;
mod listing;
mod login;
mod order_file;
mod orders;
mod placement;
mod products;
mod proxy;
mod retry_command;
mod schema;
mod status;
mod submit;
mod watch;
mod webhooks;

use crate::cli::{Cli, Command, OrdersCommand};
use crate::error::CliError;
use crate::output::Output;
use crate::session::Session;

/// Runs the command. Commands that talk to the API open a [`Session`] and always close it, so an
/// embedded emulator saves its state even when the command failed.
pub async fn run(cli: Cli) -> Result<(), CliError> {
    // --jq is compiled before anything is sent (a typo is a usage error) and implies --json.
    if let Some(expr) = &cli.global.jq {
        crate::output::use_jq(crate::jq::Jq::compile(expr)?);
    }
    let out = Output {
        json: cli.global.json || cli.global.jq.is_some(),
    };
    match cli.command {
        Command::Emulator(args) => emulator::run(args, &cli.global, out).await,
        Command::Completions(args) => completions::run(&args),
        // Writes a profile; talks to the API only through --from-emulator's control plane.
        Command::Login(args) => login::run(args, &cli.global, out).await,
        Command::Demo => crate::demo::run().await,
        // Opens its own session only for --emulator; it forwards the caller's key, not one of its own.
        Command::Proxy(args) => proxy::run(args, &cli.global).await,
        Command::Webhooks(command) => webhooks::run(command, &cli.global, out).await,
        // Recorded traffic needs no session: nothing is sent.
        Command::Doctor(args) if args.cassette.is_some() && !args.compare => {
            doctor::recordings(&args, out)
        }
        // A schema needs no credentials.
        Command::Orders(OrdersCommand::Schema) => schema::print(&schema::order_request()),
        command => {
            let session = Session::open(&cli.global).await?;
            let result = with_session(command, &session, out).await;
            session.close().await;
            result
        }
    }
}

async fn with_session(command: Command, session: &Session, out: Output) -> Result<(), CliError> {
    let client = &session.client;
    match command {
        Command::Status => status::run(client, out).await,
        Command::Doctor(args) if args.compare => doctor::compared(&args, session, out).await,
        Command::Doctor(args) => doctor::run(&args, client, out).await,
        Command::Catalog(command) => catalog::run(command, client, out).await,
        Command::Products(command) => products::run(command, client, out).await,
        Command::Artworks(command) => artworks::run(command, client, out).await,
        Command::Orders(command) => orders::run(command, session, out).await,
        Command::Placement(command) => placement::run(command, client, out).await,
        Command::Api(args) => api::run(args, client).await,
        Command::Emulator(_)
        | Command::Completions(_)
        | Command::Login(_)
        | Command::Demo
        | Command::Webhooks(_)
        | Command::Proxy(_) => Ok(()),
    }
}
