//! Where results go: tables and lines for humans, JSON for machines, always on stdout.
//!
//! **Architecture Invariant:** no control character of a server's or a customer's string reaches a
//! terminal. Every table cell (through [`Table::add_row`], the only way to add one) and every line
//! ([`Output::line`]) is [`clean`]ed: a product or customer name holding `ESC ] 0 ; … BEL` would
//! retitle the terminal, `ESC [ 2 J` clear it. `--json` prints the exact strings (JSON escapes them).
//!
//! For scripts, as gh does: a table is tab-separated rows without its header when stdout is not a
//! terminal, and `--jq EXPR` filters what `--json` would print.

use std::fmt::{self, Display};
use std::io::Write as _;
use std::sync::OnceLock;

use chrono::{DateTime, SecondsFormat, Utc};
use comfy_table::{ColumnConstraint, ContentArrangement, modifiers, presets};
use serde::Serialize;

use crate::error::CliError;
use crate::jq::Jq;

/// The `--jq` filter of this run, compiled once: [`Output`] is a `Copy` value handed to every
/// command, and the filter is neither `Copy` nor needed anywhere but where JSON is printed.
static JQ: OnceLock<Jq> = OnceLock::new();

/// Sets the `--jq` filter of this run (before anything is printed).
pub fn use_jq(jq: Jq) {
    let _ = JQ.set(jq);
}

/// The output mode of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    /// `--json`: print the API's own shapes as JSON instead of tables.
    pub json: bool,
}

impl Output {
    /// Prints one line of text (human mode only; JSON mode keeps stdout pure JSON), [`clean`]ed but
    /// for its line breaks.
    pub fn line(&self, text: impl Display) {
        if !self.json {
            write_stdout(&format!("{}\n", clean_lines(&text.to_string())));
        }
    }

    /// Prints a table (human mode only): drawn for a terminal, else tab-separated rows.
    pub fn table(&self, table: &Table) {
        if !self.json {
            if stdout_is_terminal() {
                write_stdout(&format!("{table}\n"));
            } else {
                write_stdout(&table.tsv());
            }
        }
    }

    /// Prints the footer of a list (human mode only): after the table on a terminal, else on stderr,
    /// so that piped rows stay rows only.
    pub fn footer(&self, text: &str) {
        if self.json {
            return;
        }
        if stdout_is_terminal() {
            self.line(text);
        } else {
            eprintln!("{}", clean(text));
        }
    }

    /// Prints `value` as pretty JSON (JSON mode only), [`clean_json`]ed; with `--jq`, the filter's
    /// results instead.
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), CliError> {
        if self.json {
            if let Some(jq) = JQ.get() {
                return print_filtered(jq, value);
            }
            let text = serde_json::to_string_pretty(value)
                .map_err(|e| CliError::Failed(format!("cannot encode the result as JSON: {e}")))?;
            write_stdout(&format!("{}\n", clean_json(&text)));
        }
        Ok(())
    }

    /// Prints `value` as one compact JSON line (JSON mode only), for streams of results, [`clean_json`]ed.
    pub fn json_line<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), CliError> {
        if self.json {
            if let Some(jq) = JQ.get() {
                return print_filtered(jq, value);
            }
            let text = serde_json::to_string(value)
                .map_err(|e| CliError::Failed(format!("cannot encode the result as JSON: {e}")))?;
            write_stdout(&format!("{}\n", clean_json(&text)));
        }
        Ok(())
    }
}

/// Prints the results of `--jq` on `value`, one a line, [`clean_text`]ed (tabs kept for `@tsv`).
fn print_filtered<T: Serialize + ?Sized>(jq: &Jq, value: &T) -> Result<(), CliError> {
    let value = serde_json::to_value(value)
        .map_err(|e| CliError::Failed(format!("cannot encode the result as JSON: {e}")))?;
    print_jq(jq, &value)
}

/// Prints the results of `jq` on `value` (what `api` prints with `--jq`).
pub fn print_jq(jq: &Jq, value: &serde_json::Value) -> Result<(), CliError> {
    let mut text = String::new();
    for line in jq.run(value)? {
        text.push_str(&clean_text(&line));
        text.push('\n');
    }
    write_stdout(&text);
    Ok(())
}

/// The `--jq` filter of this run, if any.
pub fn jq() -> Option<&'static Jq> {
    JQ.get()
}

/// Writes to stdout; a closed pipe (`store-api ... | head`) is not an error worth a panic.
pub fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

use crate::terminal::{clean, clean_json, clean_lines, clean_text, stdout_is_terminal};

/// A table for humans whose cells are [`clean`](crate::terminal::clean): the only kind [`Output::table`] prints.
pub struct Table(comfy_table::Table, Vec<Vec<String>>);

impl Table {
    /// Adds a row, each cell [`clean`]ed.
    pub fn add_row(&mut self, cells: Vec<String>) -> &mut Self {
        // Cleaning escapes tabs and line breaks too (`\t`, `\n`): a cell stays one field of one row.
        let cells: Vec<String> = cells.iter().map(|cell| clean(cell).into_owned()).collect();
        self.0.add_row(cells.clone());
        self.1.push(cells);
        self
    }

    /// The rows without the header, one a line, cells separated by tabs (as gh prints a table into a
    /// pipe): for `cut`, `awk -F'\t'`, `while IFS=$'\t' read -r ...`.
    pub fn tsv(&self) -> String {
        let mut text = String::new();
        for row in &self.1 {
            text.push_str(&row.join("\t"));
            text.push('\n');
        }
        text
    }
}

impl Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A table with the house style and these column headers.
pub fn table(header: &[&str]) -> Table {
    let mut table = comfy_table::Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .apply_modifier(modifiers::UTF8_ROUND_CORNERS)
        .set_content_arrangement(ContentArrangement::Dynamic);
    // A pseudo-terminal may report a width of 0: squeezing columns into it helps nobody.
    if table.width().is_some_and(|width| width < 40) {
        table.set_content_arrangement(ContentArrangement::Disabled);
    }
    if !header.is_empty() {
        table.set_header(header.to_vec());
        keep_first_column_whole(&mut table);
    }
    Table(table, Vec::new())
}

/// Ids and field names are copied from the output: never wrap them on a narrow terminal.
fn keep_first_column_whole(table: &mut comfy_table::Table) {
    if let Some(column) = table.column_mut(0) {
        column.set_constraint(ColumnConstraint::ContentWidth);
    }
}

/// A two-column table of field names and values.
pub fn fields<'a>(rows: impl IntoIterator<Item = (&'a str, String)>) -> Table {
    let mut table = table(&[]);
    for (name, value) in rows {
        table.add_row(vec![name.to_owned(), value]);
    }
    keep_first_column_whole(&mut table.0);
    table
}

/// A value or `-` when it is missing (the API omits empty fields).
pub fn or_dash<T: Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// A timestamp as the API writes it (ISO 8601 UTC with milliseconds), or `-`.
pub fn time(value: Option<DateTime<Utc>>) -> String {
    value.map_or_else(
        || "-".to_owned(),
        |t| t.to_rfc3339_opts(SecondsFormat::Millis, true),
    )
}

/// A list of values joined with commas, or `-` when empty.
pub fn joined<T: Display>(values: impl IntoIterator<Item = T>) -> String {
    let text = values
        .into_iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if text.is_empty() {
        "-".to_owned()
    } else {
        text
    }
}

/// An amount of US dollars with two decimals, or `-`.
pub fn usd(amount: Option<impl Display>) -> String {
    amount.map_or_else(|| "-".to_owned(), |a| format!("{a:.2}"))
}

/// `yes` or `no`.
pub fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

/// `1 order`, `2 orders`.
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The footer of one page of a list; `noun` is singular.
pub fn page_footer(page: u64, total_pages: u64, total_items: u64, noun: &str) -> String {
    format!(
        "page {page} of {}, {} in all{}",
        total_pages.max(1),
        count(total_items, noun),
        if total_pages > page {
            " (--page N for more, --all for every page)"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_formatters() {
        assert_eq!(or_dash(None::<u8>), "-");
        assert_eq!(or_dash(Some("x")), "x");
        assert_eq!(joined(["a", "b"]), "a, b");
        assert_eq!(joined(Vec::<String>::new()), "-");
        assert_eq!(usd(Some(1.5)), "1.50");
        assert_eq!(usd(None::<f64>), "-");
        assert_eq!(
            time(Some("2026-08-01T12:00:00Z".parse().unwrap())),
            "2026-08-01T12:00:00.000Z"
        );
        assert_eq!(
            page_footer(1, 3, 120, "order"),
            "page 1 of 3, 120 orders in all (--page N for more, --all for every page)"
        );
        assert_eq!(
            page_footer(1, 0, 0, "order"),
            "page 1 of 1, 0 orders in all"
        );
        assert_eq!(page_footer(1, 1, 1, "order"), "page 1 of 1, 1 order in all");
    }

    #[test]
    fn a_table_is_drawn_for_a_terminal_and_tab_separated_for_a_pipe() {
        let mut t = table(&["ID", "NAME"]);
        t.add_row(vec!["ord_1".to_owned(), "Ada\tLovelace".to_owned()]);
        t.add_row(vec!["ord_2".to_owned(), "-".to_owned()]);
        // A pipe: rows only, one field per column; the tab inside a value is escaped.
        assert_eq!(t.tsv(), "ord_1\tAda\\tLovelace\nord_2\t-\n");
        // A terminal: the drawn table, with its header.
        let drawn = t.to_string();
        assert!(drawn.contains("ID") && drawn.contains("NAME"), "{drawn}");
        assert!(drawn.contains('╭') && drawn.contains("│ ord_1"), "{drawn}");
        assert!(!drawn.contains('\t'), "{drawn}");
        let details = fields([("id", "ord_1".to_owned()), ("name", "Ada".to_owned())]);
        assert_eq!(details.tsv(), "id\tord_1\nname\tAda\n");
    }

    #[test]
    fn table_cells_are_cleaned() {
        let mut t = table(&["NAME"]);
        t.add_row(vec!["x\u{1b}[2Jy".to_owned()]);
        let shown = t.to_string();
        assert!(
            shown.contains("x\\u{1b}[2Jy") && !shown.contains('\u{1b}'),
            "{shown}"
        );
    }
}
