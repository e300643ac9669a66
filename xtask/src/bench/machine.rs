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
    /// user + nice + system + irq + softirq: time some process (or the kernel for it) ran.
    pub busy: u64,
    /// Time the hypervisor ran something else while this machine wanted the CPU.
    pub steal: u64,
    /// user + nice + system + idle + iowait + irq + softirq + steal.
    pub total: u64,
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
        busy: fields[0] + fields[1] + fields[2] + fields[5] + fields[6],
        steal: fields[7],
        total: fields.iter().sum(),
    })
}

/// Clock ticks per second of /proc's CPU times (`USER_HZ`, 100 on every mainstream Linux architecture).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// CPU time of this process and of the children it has waited for, in clock ticks.
pub fn own_cpu_ticks() -> Option<u64> {
    parse_own_ticks(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// utime + stime + cutime + cstime of a /proc/PID/stat line.
fn parse_own_ticks(stat: &str) -> Option<u64> {
    // The command name, in parentheses, may itself contain spaces and parentheses.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Fields 14 to 17 of the file; `after_name` starts at field 3.
    (11..15).map(|i| fields.get(i)?.parse::<u64>().ok()).sum()
}

/// The machine's CPU counters and this process's own use at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    cpu: CpuTimes,
    own_ticks: u64,
}

/// How busy the machine was between two samples, apart from this command and what it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    /// Share of all CPU time taken by the hypervisor (CPU steal).
    pub steal_percent: f64,
    /// Share of all CPU time used by processes other than this command and its children (other
    /// builds and tests on a shared machine).
    pub others_percent: f64,
}

impl Sample {
    /// Now, when /proc can be read.
    pub fn now() -> Option<Sample> {
        Some(Sample {
            cpu: parse_cpu_times(&std::fs::read_to_string("/proc/stat").ok()?)?,
            own_ticks: own_cpu_ticks()?,
        })
    }

    /// The load between `earlier` and `self`. Children count once they have been waited for, so take
    /// `self` after the step's processes ended.
    pub fn load_since(self, earlier: Sample) -> Option<Load> {
        let total = self.cpu.total.checked_sub(earlier.cpu.total)?;
        let steal = self.cpu.steal.checked_sub(earlier.cpu.steal)?;
        let busy = self.cpu.busy.checked_sub(earlier.cpu.busy)?;
        let own = self.own_ticks.checked_sub(earlier.own_ticks)?;
        (total > 0).then(|| Load {
            steal_percent: steal as f64 * 100.0 / total as f64,
            others_percent: busy.saturating_sub(own) as f64 * 100.0 / total as f64,
        })
    }
}

impl Load {
    /// `other processes 41%, CPU steal 3%`.
    pub fn describe(&self) -> String {
        format!(
            "other processes {:.0}%, CPU steal {:.0}%",
            self.others_percent, self.steal_percent
        )
    }
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
    fn load_is_the_share_of_stolen_and_foreign_ticks() {
        let cpu = |busy: u64, idle: u64, steal: u64| {
            parse_cpu_times(&format!(
                "cpu  {busy} 0 0 {idle} 0 0 0 {steal} 0 0\ncpu0 1 2\n"
            ))
            .unwrap()
        };
        assert_eq!(
            cpu(100, 800, 100),
            CpuTimes {
                busy: 100,
                steal: 100,
                total: 1000
            }
        );
        let before = Sample {
            cpu: cpu(100, 800, 100),
            own_ticks: 50,
        };
        // 1,000 ticks later: 600 busy, of which 200 were ours; 100 stolen.
        let after = Sample {
            cpu: cpu(700, 1100, 200),
            own_ticks: 250,
        };
        assert_eq!(
            after.load_since(before),
            Some(Load {
                steal_percent: 10.0,
                others_percent: 40.0
            })
        );
        assert_eq!(before.load_since(after), None);
        assert_eq!(parse_cpu_times("cpu  1 2 3\n"), None);
    }

    #[test]
    fn own_ticks_are_read_after_the_command_name() {
        let stat =
            "6339 (a (weird) name) R 6329 6329 5727 0 -1 4194304 100 0 0 0 7 3 20 10 20 0 1 0";
        assert_eq!(parse_own_ticks(stat), Some(40));
        assert_eq!(parse_own_ticks("1 (x) R 1 2"), None);
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
