//! The command line that retries a submission under the externalOrderId this run generated (`orders
//! submit --no-write`), as the user typed it: their flags kept, the key never printed.

use std::ffi::OsString;

/// What stands for the API key of `--api-key KEY` in a printed command.
const KEY_PLACEHOLDER: &str = "\"$STORE_API_KEY\"";

/// `args` (the process's arguments, the program first) as a POSIX shell command that sends the same
/// order again under `external_id`: `--external-id ID` added at the end, the value of `--api-key`
/// replaced by `"$STORE_API_KEY"`, and, for the deprecated `orders create` (`alias`), its `create`
/// spelt `submit --no-write` (`create` takes no `--external-id`).
pub fn retry_command(
    args: impl IntoIterator<Item = OsString>,
    external_id: &str,
    alias: bool,
) -> String {
    let mut words = Vec::new();
    let mut after_orders = false;
    let mut alias_left = alias;
    let mut key_next = false;
    for arg in args {
        let arg = arg.to_string_lossy().into_owned();
        if key_next {
            key_next = false;
            words.push(KEY_PLACEHOLDER.to_owned());
            continue;
        }
        if arg == "--api-key" {
            key_next = true;
            words.push(arg);
            continue;
        }
        if arg.starts_with("--api-key=") {
            words.push(format!("--api-key={KEY_PLACEHOLDER}"));
            continue;
        }
        if alias_left && after_orders && arg == "create" {
            alias_left = false;
            words.extend(["submit".to_owned(), "--no-write".to_owned()]);
            continue;
        }
        after_orders |= arg == "orders";
        words.push(quote(&arg));
    }
    words.extend(["--external-id".to_owned(), quote(external_id)]);
    words.join(" ")
}

/// `word` as one word of a POSIX shell: as it is when it holds no character the shell reads, else in
/// single quotes (a `'` inside written `'\''`).
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(args: &[&str], alias: bool) -> String {
        retry_command(args.iter().map(OsString::from), "ID-1", alias)
    }

    #[test]
    fn the_command_is_the_users_with_the_id_added() {
        assert_eq!(
            retry(
                &[
                    "store-api",
                    "--profile",
                    "shop",
                    "orders",
                    "submit",
                    "--no-write",
                    "--file",
                    "my order's.json"
                ],
                false
            ),
            r"store-api --profile shop orders submit --no-write --file 'my order'\''s.json' --external-id ID-1"
        );
        assert_eq!(
            retry(
                &[
                    "/bin/store-api",
                    "orders",
                    "submit",
                    "--file",
                    "-",
                    "--no-write",
                    "--jq",
                    ".order.id"
                ],
                false
            ),
            "/bin/store-api orders submit --file - --no-write --jq .order.id --external-id ID-1"
        );
        assert_eq!(
            retry(&["store-api", "--jq", "", "orders"], false),
            "store-api --jq '' orders --external-id ID-1"
        );
    }

    #[test]
    fn the_key_is_never_printed() {
        let printed = retry(
            &[
                "store-api",
                "--api-key",
                "sk_secret",
                "orders",
                "submit",
                "--api-key=sk_other",
                "--no-write",
                "--file",
                "o.json",
            ],
            false,
        );
        assert!(!printed.contains("sk_"), "{printed}");
        assert_eq!(
            printed,
            r#"store-api --api-key "$STORE_API_KEY" orders submit --api-key="$STORE_API_KEY" --no-write --file o.json --external-id ID-1"#
        );
    }

    #[test]
    fn the_deprecated_create_retries_as_submit_no_write() {
        assert_eq!(
            retry(&["store-api", "orders", "create", "--file", "create"], true),
            "store-api orders submit --no-write --file create --external-id ID-1"
        );
        // `create` before `orders` is some flag's value, not the command.
        assert_eq!(
            retry(
                &[
                    "store-api",
                    "--profile",
                    "create",
                    "orders",
                    "--json",
                    "create",
                    "--file",
                    "o.json"
                ],
                true
            ),
            "store-api --profile create orders --json submit --no-write --file o.json --external-id ID-1"
        );
    }
}
