//! `--jq EXPR`: a jq filter, compiled and run by jaq (a maintained implementation of the jq language),
//! over what `--json` would print. Compiled once, before anything is sent, so a typo is a usage error
//! (exit 2) rather than a request made for nothing. The library is the jaq binary's own: core, std,
//! JSON and the formats (`@csv`, `@tsv`, `tojson`...).

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::Val;

use crate::error::CliError;

type Filter = jaq_core::compile::Filter<jaq_core::Native<data::JustLut<Val>>>;

/// A compiled `--jq` expression.
pub struct Jq {
    filter: Filter,
}

impl Jq {
    /// Compiles `expr` with jq's standard library (jaq's core, std and JSON definitions).
    pub fn compile(expr: &str) -> Result<Jq, CliError> {
        let defs = jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs());
        let funs = jaq_core::funs()
            .chain(jaq_std::funs())
            .chain(jaq_json::funs())
            .chain(jaq_fmts::funs());
        let arena = Arena::default();
        let program = File {
            code: expr,
            path: (),
        };
        let modules = Loader::new(defs).load(&arena, program).map_err(|errors| {
            let reasons: Vec<String> = errors
                .into_iter()
                .flat_map(|(_, error)| load_reasons(error))
                .collect();
            usage(expr, &reasons.join("; "))
        })?;
        let filter = Compiler::default()
            .with_funs(funs)
            .compile(modules)
            .map_err(|errors| {
                let reasons: Vec<String> = errors
                    .into_iter()
                    .flat_map(|(_, undefined)| undefined)
                    .map(|(name, kind)| format!("undefined {} `{name}`", kind.as_str()))
                    .collect();
                usage(expr, &reasons.join("; "))
            })?;
        Ok(Jq { filter })
    }

    /// Runs the filter on `input`: one line of text per result, a string as it is (as `jq -r` and
    /// `gh --jq` print it), any other value as compact JSON.
    pub fn run(&self, input: &serde_json::Value) -> Result<Vec<String>, CliError> {
        // serde_json's text is JSON, which jaq reads whole: the same value, numbers included.
        let text = serde_json::to_vec(input)
            .map_err(|e| CliError::Failed(format!("cannot encode the result as JSON: {e}")))?;
        let input = jaq_json::read::parse_single(&text)
            .map_err(|e| CliError::Failed(format!("--jq: cannot read the JSON: {e}")))?;
        let ctx = Ctx::<data::JustLut<Val>>::new(&self.filter.lut, Vars::new([]));
        let mut lines = Vec::new();
        for result in self.filter.id.run((ctx, input)).map(unwrap_valr) {
            match result {
                Ok(Val::TStr(bytes)) => lines.push(String::from_utf8_lossy(&bytes).into_owned()),
                Ok(value) => lines.push(value.to_string()),
                Err(error) => return Err(CliError::Failed(format!("--jq: {error}"))),
            }
        }
        Ok(lines)
    }
}

fn usage(expr: &str, reason: &str) -> CliError {
    CliError::Usage(format!("--jq: cannot compile {expr:?}: {reason}"))
}

/// What went wrong in one module, in jaq's words: what was expected, and where (the rest of the text).
fn load_reasons(error: jaq_core::load::Error<&str>) -> Vec<String> {
    use jaq_core::load::Error;
    let near = |rest: &str| {
        let rest: String = rest.chars().take(20).collect();
        if rest.is_empty() {
            "at the end".to_owned()
        } else {
            format!("near {rest:?}")
        }
    };
    match error {
        Error::Io(errors) => errors
            .into_iter()
            .map(|(path, message)| format!("{path}: {message}"))
            .collect(),
        Error::Lex(errors) => errors
            .into_iter()
            .map(|(expected, rest)| format!("expected {} {}", expected.as_str(), near(rest)))
            .collect(),
        Error::Parse(errors) => errors
            .into_iter()
            .map(|(expected, rest)| format!("expected {} {}", expected.as_str(), near(rest)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(expr: &str, input: serde_json::Value, expected: &[&str]) {
        let lines = Jq::compile(expr).unwrap().run(&input).unwrap();
        assert_eq!(lines, expected, "{expr}");
    }

    #[test]
    fn results_are_lines_strings_raw() {
        let page = serde_json::json!({"items": [{"id": "a", "n": 1}, {"id": "b", "n": 2}], "totalItems": 2});
        check(".items[].id", page.clone(), &["a", "b"]);
        check(".totalItems", page.clone(), &["2"]);
        check(".items[0]", page.clone(), &[r#"{"id":"a","n":1}"#]);
        check("[.items[].n] | add", page.clone(), &["3"]);
        check(
            r#".items[] | select(.id == "b") | "\(.id)\t\(.n)""#,
            page.clone(),
            &["b\t2"],
        );
        check(".items | map(.id) | join(\",\")", page.clone(), &["a,b"]);
        check(
            ".items[] | [.id, .n] | @tsv",
            page.clone(),
            &["a\t1", "b\t2"],
        );
        check(".items[0] | [.id, .n] | @csv", page, &["\"a\",1"]);
    }

    #[test]
    fn a_bad_expression_is_a_usage_error_naming_it() {
        for expr in [".items[", "nosuchfilter", ".a |"] {
            match Jq::compile(expr) {
                Err(CliError::Usage(message)) => {
                    assert!(message.starts_with("--jq: cannot compile"), "{message}")
                }
                other => panic!("{expr}: {:?}", other.err()),
            }
        }
        let failed = Jq::compile(".a + 1")
            .unwrap()
            .run(&serde_json::json!({"a": "x"}));
        assert!(matches!(failed, Err(CliError::Failed(_))));
    }
}
