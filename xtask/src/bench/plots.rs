//! SVG plots written beside `BENCHMARKS.md` (in `benchmarks/`) and linked from it: the emulator's list
//! latency against the store's size, and the rate-limit run's requests over time against the service's
//! limit. Drawn with plotters' SVG backend only (no fonts or system libraries: text is laid out by
//! estimate, and the viewer renders it).

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::BenchError;
use super::metrics::Metrics;

/// Folder of the plots, beside `BENCHMARKS.md`.
pub const FOLDER: &str = "benchmarks";
/// Where the rate-limit bench writes its timeline (`CARGO_TARGET_TMPDIR` of the workspace's target).
pub const RATE_LIMIT_TIMELINE: &str = "target/tmp/rate_limit_requests.csv";

/// The growth lists of the growth bench: metric name and legend.
const GROWTH_LISTS: [(&str, &str); 3] = [
    ("default", "GET /orders?limit=100"),
    ("status", "… &filter[status]=pending"),
    ("external", "… &filter[externalOrderId]=…"),
];

/// One plot written: what it shows and its path relative to `BENCHMARKS.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// What it shows.
    pub title: String,
    /// `benchmarks/NAME.svg`.
    pub path: String,
}

/// One line of a plot: its legend and points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend.
    pub label: String,
    /// (x, y) in x order.
    pub points: Vec<(f64, f64)>,
}

/// Writes every plot the run has data for into `root/benchmarks/`; returns the ones written.
pub fn write_all(root: &Path, metrics: &Metrics) -> Result<Vec<Plot>, BenchError> {
    let folder = root.join(FOLDER);
    std::fs::create_dir_all(&folder)
        .map_err(|e| BenchError::Io(format!("creating {}", folder.display()), e))?;
    let mut plots = Vec::new();
    let growth = growth_series(metrics);
    if growth.iter().any(|s| s.points.len() > 1) {
        let title = "emulator: GET /orders latency (median) against the store's size";
        write_growth(&folder.join("growth.svg"), title, &growth)?;
        plots.push(Plot {
            title: title.to_owned(),
            path: format!("{FOLDER}/growth.svg"),
        });
    }
    let timeline_path = root.join(RATE_LIMIT_TIMELINE);
    if let Ok(text) = std::fs::read_to_string(&timeline_path) {
        let series = rate_limit_series(&text);
        if series.iter().all(|s| !s.points.is_empty()) && series.len() == 2 {
            let title = "rate limit: requests sent over time against the service's limit";
            write_timeline(&folder.join("rate_limit.svg"), title, &series)?;
            plots.push(Plot {
                title: title.to_owned(),
                path: format!("{FOLDER}/rate_limit.svg"),
            });
        }
    }
    Ok(plots)
}

/// The growth bench's medians (`growth_{list}_ms_{orders}`) as one series per list, by store size.
pub fn growth_series(metrics: &Metrics) -> Vec<Series> {
    GROWTH_LISTS
        .iter()
        .map(|(name, label)| {
            let prefix = format!("growth_{name}_ms_");
            let mut points: Vec<(f64, f64)> = metrics
                .iter()
                .filter_map(|(metric, value)| {
                    let size = metric.strip_prefix(&prefix)?.parse::<f64>().ok()?;
                    Some((size, value))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                label: (*label).to_owned(),
                points,
            }
        })
        .collect()
}

/// The rate-limit timeline (`seconds,requests,allowed` rows) as two series: requests sent so far, and
/// what the service allows by then (its burst plus its rate).
pub fn rate_limit_series(csv: &str) -> Vec<Series> {
    let rows: Vec<[f64; 3]> = csv
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(',').map(|f| f.trim().parse::<f64>());
            Some([
                fields.next()?.ok()?,
                fields.next()?.ok()?,
                fields.next()?.ok()?,
            ])
        })
        .collect();
    vec![
        Series {
            label: "requests sent".to_owned(),
            points: rows.iter().map(|r| (r[0], r[1])).collect(),
        },
        Series {
            label: "service limit (burst + rate × t)".to_owned(),
            points: rows.iter().map(|r| (r[0], r[2])).collect(),
        },
    ]
}

const SIZE: (u32, u32) = (800, 480);
const PALETTE: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
];

fn plot_error(path: &Path, error: impl std::fmt::Display) -> BenchError {
    BenchError::Command {
        command: format!("plotting {}", path.display()),
        detail: error.to_string(),
    }
}

/// Latency against store size: x on a log scale (sizes grow tenfold), y from 0.
fn write_growth(path: &PathBuf, title: &str, series: &[Series]) -> Result<(), BenchError> {
    let points = series.iter().flat_map(|s| s.points.iter());
    let (x_min, x_max) = points.clone().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    let y_max = points.fold(0.0_f64, |hi, p| hi.max(p.1)) * 1.25;
    let area = SVGBackend::new(path, SIZE).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| plot_error(path, e);
    area.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (x_min * 0.8..x_max * 1.25).log_scale(),
            0.0..y_max.max(0.001),
        )
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("orders in the store")
        .y_desc("median latency (ms)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()
        .map_err(|e| fail(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(PointSeries::of_element(
                s.points.iter().copied(),
                4,
                color.filled(),
                &|point, size, style| Circle::new(point, size, style),
            ))
            .map_err(|e| fail(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    area.present().map_err(|e| fail(&e))
}

/// Requests sent against the limit line, over the run's seconds.
fn write_timeline(path: &PathBuf, title: &str, series: &[Series]) -> Result<(), BenchError> {
    let points = series.iter().flat_map(|s| s.points.iter());
    let x_max = points.clone().fold(0.0_f64, |hi, p| hi.max(p.0));
    let y_max = points.fold(0.0_f64, |hi, p| hi.max(p.1)) * 1.1;
    let area = SVGBackend::new(path, SIZE).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| plot_error(path, e);
    area.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max.max(1.0), 0.0..y_max.max(1.0))
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("seconds since the first request")
        .y_desc("requests")
        .draw()
        .map_err(|e| fail(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    area.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_growth_and_rate_limit_plots_are_written_with_their_series() {
        let root = std::env::temp_dir().join(format!("xtask-plots-{}", std::process::id()));
        let metrics = Metrics::parse(
            "growth_default_ms_1000=0.14\ngrowth_default_ms_10000=0.15\ngrowth_default_ms_100000=0.16\n\
             growth_status_ms_1000=0.15\ngrowth_status_ms_100000=0.17\n\
             growth_external_ms_1000=0.09\ngrowth_external_ms_100000=0.095\ngrowth_default_ratio=1.1\n",
        );
        let series = growth_series(&metrics);
        assert_eq!(
            series[0].points,
            vec![(1_000.0, 0.14), (10_000.0, 0.15), (100_000.0, 0.16)]
        );
        assert_eq!(series[2].points.len(), 2);

        let timeline = root.join(RATE_LIMIT_TIMELINE);
        std::fs::create_dir_all(timeline.parent().unwrap()).unwrap();
        std::fs::write(
            &timeline,
            "seconds,requests,allowed\n0.0,1,10\n0.01,10,10.02\n0.5,11,11\n1.0,12,12\n",
        )
        .unwrap();

        let plots = write_all(&root, &metrics).unwrap();
        assert_eq!(
            plots.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(),
            ["benchmarks/growth.svg", "benchmarks/rate_limit.svg"]
        );
        let growth = std::fs::read_to_string(root.join("benchmarks/growth.svg")).unwrap();
        assert!(growth.starts_with("<svg"));
        for label in [
            "GET /orders?limit=100",
            "filter[status]=pending",
            "orders in the store",
        ] {
            assert!(growth.contains(label), "growth.svg lacks {label}");
        }
        // One polyline per series (plus the legend's sample lines).
        assert!(growth.matches("<polyline").count() >= 3);
        let rate = std::fs::read_to_string(root.join("benchmarks/rate_limit.svg")).unwrap();
        assert!(rate.contains("requests sent") && rate.contains("service limit"));
        assert!(rate.matches("<polyline").count() >= 2);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn without_data_no_plot_is_written() {
        let root = std::env::temp_dir().join(format!("xtask-no-plots-{}", std::process::id()));
        let plots = write_all(&root, &Metrics::parse("decode_ratio=0.5\n")).unwrap();
        assert!(plots.is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
