//! The machine a run measured: CPU, memory, compiler and date.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// What the report says about the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// Logical CPUs (`processor` entries of /proc/cpuinfo).
    pub cores: usize,
    /// The CPU's `model name`.
    pub cpu: String,
    /// `MemTotal` of /proc/meminfo, in KiB.
    pub memory_kib: u64,
    /// `rustc --version`.
    pub rustc: String,
    /// When the run started, UTC, `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
}

impl Machine {
    /// Reads the machine's description; unknown parts are left empty or zero.
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let (cores, cpu) = parse_cpuinfo(&cpuinfo);
        let rustc = Command::new("rustc")
            .arg("--version")
            .output()
            .ok()
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
            .unwrap_or_default();
        let cores = if cores == 0 {
            std::thread::available_parallelism().map_or(0, usize::from)
        } else {
            cores
        };
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Machine {
            cores,
            cpu,
            memory_kib: parse_mem_total(&meminfo),
            rustc,
            date: utc_date(seconds),
        }
    }

    /// Memory in GiB, one decimal.
    pub fn memory(&self) -> String {
        format!("{:.1} GiB", self.memory_kib as f64 / (1024.0 * 1024.0))
    }
}

/// Cumulative CPU time of all CPUs, from the first line of /proc/stat (in clock ticks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time the hypervisor ran something else while this machine wanted the CPU.
    pub steal: u64,
    /// user + nice + system + idle + iowait + irq + softirq + steal.
    pub total: u64,
}

impl CpuTimes {
    /// Now, when /proc/stat can be read.
    pub fn now() -> Option<CpuTimes> {
        parse_cpu_times(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Percentage of CPU time stolen between `earlier` and `self`.
    pub fn steal_percent_since(self, earlier: CpuTimes) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total)?;
        let steal = self.steal.checked_sub(earlier.steal)?;
        (total > 0).then(|| steal as f64 * 100.0 / total as f64)
    }
}

fn parse_cpu_times(stat: &str) -> Option<CpuTimes> {
    let fields: Vec<u64> = stat
        .lines()
        .find(|line| line.starts_with("cpu "))?
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    if fields.len() < 8 {
        return None;
    }
    Some(CpuTimes {
        steal: fields[7],
        total: fields.iter().sum(),
    })
}

/// Logical CPUs and the first model name in /proc/cpuinfo.
fn parse_cpuinfo(text: &str) -> (usize, String) {
    let field = |line: &str, name: &str| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().to_owned())
    };
    let cores = text
        .lines()
        .filter(|l| field(l, "processor").is_some())
        .count();
    let model = text
        .lines()
        .find_map(|l| field(l, "model name"))
        .unwrap_or_default();
    (cores, model)
}

/// `MemTotal` in KiB.
fn parse_mem_total(text: &str) -> u64 {
    text.lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

/// `seconds` since the Unix epoch as `YYYY-MM-DD HH:MM UTC` (proleptic Gregorian calendar).
pub fn utc_date(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let minutes_of_day = (seconds % 86_400) / 60;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minutes_of_day / 60,
        minutes_of_day % 60
    )
}

/// Year, month and day of the `days`th day after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_utc() {
        let cases = [
            (0, "1970-01-01 00:00 UTC"),
            (951_782_400, "2000-02-29 00:00 UTC"),
            (1_785_936_659, "2026-08-05 13:30 UTC"),
            (4_107_542_399, "2100-02-28 23:59 UTC"),
        ];
        for (seconds, expected) in cases {
            assert_eq!(utc_date(seconds), expected, "{seconds}");
        }
    }

    #[test]
    fn steal_is_the_share_of_stolen_ticks() {
        let before = parse_cpu_times("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!(
            before,
            CpuTimes {
                steal: 40,
                total: 1000
            }
        );
        let after = parse_cpu_times("cpu  200 0 100 1500 10 0 0 190 0 0\n").unwrap();
        assert_eq!(after.steal_percent_since(before), Some(15.0));
        assert_eq!(before.steal_percent_since(after), None);
        assert_eq!(parse_cpu_times("cpu  1 2 3\n"), None);
    }

    #[test]
    fn reads_cpus_and_memory() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n\n\
                       processor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(parse_cpuinfo(cpuinfo), (2, "AMD EPYC 7B13".to_owned()));
        assert_eq!(
            parse_mem_total("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            24_576_000
        );
        assert_eq!(parse_mem_total("nothing"), 0);
    }
}
