//! The benches' machine-readable output: one `name=value` line per figure, among free-form text.

use std::collections::BTreeMap;

/// Figures by name, from one or more benches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics(BTreeMap<String, f64>);

impl Metrics {
    /// Reads every `name=value` line of `output` whose name is lowercase ASCII letters, digits and `_`
    /// and whose value is a number; other lines are prose and are skipped.
    pub fn parse(output: &str) -> Metrics {
        let figures = output
            .lines()
            .filter_map(|line| {
                let (name, value) = line.trim().split_once('=')?;
                let valid_name = !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
                let value: f64 = value.trim().parse().ok()?;
                valid_name.then(|| (name.to_owned(), value))
            })
            .collect();
        Metrics(figures)
    }

    /// The figure called `name`, if a bench printed it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.get(name).copied()
    }

    /// Every figure, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.0.iter().map(|(name, value)| (name.as_str(), *value))
    }

    /// Sets a figure (a derived one, or one the xtask measured itself).
    pub fn insert(&mut self, name: &str, value: f64) {
        self.0.insert(name.to_owned(), value);
    }

    /// Adds every figure of `other`, replacing figures of the same name.
    pub fn extend(&mut self, other: Metrics) {
        self.0.extend(other.0);
    }

    /// `numerator ÷ denominator` of two figures, when both exist and the denominator is not zero.
    pub fn ratio(&self, numerator: &str, denominator: &str) -> Option<f64> {
        let (n, d) = (self.get(numerator)?, self.get(denominator)?);
        (d != 0.0).then_some(n / d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_figure_lines_and_skips_prose() {
        let output = "page: 1234 bytes\n\
                      decode_ratio=0.585\n\
                      rate_limit_429=0\n  webhook_parse_us=0.88  \n\
                      target: a=b\n\
                      Name=1\n\
                      emulator_get_orders_p99_ms=NaN-ish\n\
                      =3\n";
        let metrics = Metrics::parse(output);
        assert_eq!(metrics.get("decode_ratio"), Some(0.585));
        assert_eq!(metrics.get("rate_limit_429"), Some(0.0));
        assert_eq!(metrics.get("webhook_parse_us"), Some(0.88));
        assert_eq!(metrics.get("Name"), None);
        assert_eq!(metrics.get("emulator_get_orders_p99_ms"), None);
        assert_eq!(metrics.0.len(), 3);
    }

    #[test]
    fn ratio_needs_both_figures_and_a_non_zero_denominator() {
        let mut metrics = Metrics::parse("a=10\nb=4\nzero=0\n");
        assert_eq!(metrics.ratio("a", "b"), Some(2.5));
        assert_eq!(metrics.ratio("a", "zero"), None);
        assert_eq!(metrics.ratio("a", "missing"), None);
        metrics.insert("missing", 5.0);
        assert_eq!(metrics.ratio("a", "missing"), Some(2.0));
    }
}
