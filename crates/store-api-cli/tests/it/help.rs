//! `--help` of every command, found by walking the command tree from the top-level help.

use crate::common::{Run, bare};
use crate::snap;

fn help(path: &[String]) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    Run::from(bare().args(&args).output().unwrap())
        .code(0)
        .stdout
}

/// The subcommand names listed under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_has_complete_help() {
    let mut pending = vec![Vec::<String>::new()];
    let mut seen = Vec::new();
    while let Some(path) = pending.pop() {
        let text = help(&path);
        let name = if path.is_empty() {
            "store-api".to_owned()
        } else {
            path.join("-")
        };
        assert!(text.contains("Usage: store-api"), "{name}: {text}");
        snap!(format!("help__{name}"), text);
        for sub in subcommands(&text) {
            let mut next = path.clone();
            next.push(sub);
            pending.push(next);
        }
        seen.push(name);
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "api",
            "artworks",
            "artworks-create",
            "artworks-get",
            "artworks-list",
            "catalog",
            "catalog-get",
            "catalog-list",
            "completions",
            "demo",
            "doctor",
            "emulator",
            "emulator-trigger",
            "login",
            "orders",
            "orders-find",
            "orders-get",
            "orders-list",
            "orders-schema",
            "orders-submit",
            "orders-watch",
            "placement",
            "placement-fit",
            "products",
            "products-get",
            "products-list",
            "proxy",
            "status",
            "store-api",
            "webhooks",
            "webhooks-listen",
            "webhooks-schema",
            "webhooks-verify",
        ]
    );
}
