//! Per primary, whether its replicas acknowledge writes: a primary found short of replicas gets one
//! write at a time (a probe) until one is confirmed, and the other writes for it are refused at once.
//!
//! Why: `WAIT` holds the connection that sent it until the replicas answer or its timeout passes, and
//! a cluster client has one connection per node. Without this, every caller of a primary without a
//! replica (the one just promoted) queued a write and a `WAIT` on that connection, each holding it
//! for the whole timeout: the queue grew faster than it drained, and writes kept timing out for
//! seconds after a replica was back (the cluster receivers bench lost events and, with `complete`
//! timing out past the lease, ran some twice). Other primaries are never affected: the bookkeeping is
//! per node.
//!
//! Which node serves a key is asked of the cluster (`CLUSTER SLOTS`) on first use and again (at most
//! once a second) when a write was run by another node than expected or failed, and learned from the
//! writes themselves (each names the node that ran it, `CLUSTER MYID`), per bucket of slots.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Slots per bucket: a primary serves ranges of slots, so a bucket is nearly always one primary's,
/// and a few writes teach every bucket.
const SLOTS_PER_BUCKET: u16 = 128;

/// What is known of the primaries of one connection.
#[derive(Debug, Default)]
pub(crate) struct Primaries {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The node that last ran a write for a key of each bucket.
    buckets: HashMap<usize, Arc<str>>,
    nodes: HashMap<Arc<str>, Node>,
    /// When the slots were last asked for; whether what is known may be out of date.
    asked: Option<Instant>,
    stale: bool,
}

/// How often the slots may be asked for again.
const ASK_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
struct Node {
    /// Its last write was not confirmed (too few acknowledgements, or no answer).
    short: bool,
    /// When the write probing it was sent, while it is in flight.
    probing_since: Option<Instant>,
}

impl Primaries {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every step leaves the state consistent, so a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the slots should be asked for now (never yet, or out of date and not asked within
    /// a second); when `true`, the caller asks and passes the answer to [`learn`](Self::learn).
    pub(crate) fn should_ask(&self) -> bool {
        let mut state = self.lock();
        let due = match state.asked {
            None => true,
            Some(asked) => state.stale && asked.elapsed() >= ASK_EVERY,
        };
        if due {
            state.asked = Some(Instant::now());
            state.stale = false;
        }
        due
    }

    /// What `CLUSTER SLOTS` answered: each range of slots and the id of its primary.
    pub(crate) fn learn(&self, ranges: &[(u16, u16, String)]) {
        let mut state = self.lock();
        for (start, end, node) in ranges {
            let node: Arc<str> = Arc::from(node.as_str());
            let first = usize::from(*start / SLOTS_PER_BUCKET);
            let last = usize::from(*end / SLOTS_PER_BUCKET);
            for bucket in first..=last {
                state.buckets.insert(bucket, node.clone());
            }
        }
    }

    /// Whether a write for `key` may go now: `None` when its primary is short of replicas and a probe
    /// is already in flight (younger than `probe_bound`); otherwise a ticket to report the outcome on.
    pub(crate) fn admit(
        &self,
        key: &str,
        cluster: bool,
        probe_bound: Duration,
    ) -> Option<Ticket<'_>> {
        let bucket = if cluster {
            usize::from(slot(key.as_bytes()) / SLOTS_PER_BUCKET)
        } else {
            0
        };
        let mut state = self.lock();
        let gate = state.buckets.get(&bucket).cloned();
        let mut probe = false;
        if let Some(gate) = &gate {
            let node = state.nodes.entry(gate.clone()).or_default();
            if node.short {
                if node
                    .probing_since
                    .is_some_and(|since| since.elapsed() < probe_bound)
                {
                    return None;
                }
                node.probing_since = Some(Instant::now());
                probe = true;
            }
        }
        Some(Ticket {
            primaries: self,
            bucket,
            gate,
            probe,
            finished: false,
        })
    }
}

/// One admitted write: [`finish`](Self::finish) it with its outcome. Dropped unfinished (its caller
/// gave up), a probe lets the next one go.
#[derive(Debug)]
pub(crate) struct Ticket<'a> {
    primaries: &'a Primaries,
    bucket: usize,
    /// The node the bucket pointed at when the write was admitted.
    gate: Option<Arc<str>>,
    probe: bool,
    finished: bool,
}

impl Ticket<'_> {
    /// The write was run by node `answered` (`None`: it failed, no node known) and was `confirmed`
    /// (enough replicas acknowledged it) or not.
    pub(crate) fn finish(mut self, answered: Option<&str>, confirmed: bool) {
        self.finished = true;
        let mut state = self.primaries.lock();
        let answered: Option<Arc<str>> = answered.map(Arc::from);
        if let Some(node) = &answered {
            state.buckets.insert(self.bucket, node.clone());
            state.nodes.entry(node.clone()).or_default().short = !confirmed;
        }
        if let Some(gate) = &self.gate {
            let node = state.nodes.entry(gate.clone()).or_default();
            if self.probe {
                node.probing_since = None;
            }
            // The node the bucket pointed at did not run it: it failed (the node may be gone), or
            // the slots moved. Probe it one write at a time until a write is confirmed.
            if answered.as_ref() != Some(gate) {
                node.short = !confirmed;
                state.stale = true;
            }
        } else if answered.is_none() {
            state.stale = true;
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if self.finished || !self.probe {
            return;
        }
        if let Some(gate) = &self.gate {
            let mut state = self.primaries.lock();
            if let Some(node) = state.nodes.get_mut(gate) {
                node.probing_since = None;
            }
        }
    }
}

/// The ranges of `CLUSTER SLOTS`' answer with their primary's id (what it cannot read is left out).
pub(crate) fn parse_slots(answer: redis::Value) -> Vec<(u16, u16, String)> {
    let redis::Value::Array(ranges) = answer else {
        return Vec::new();
    };
    ranges
        .into_iter()
        .filter_map(|range| {
            let redis::Value::Array(fields) = range else {
                return None;
            };
            let mut fields = fields.into_iter();
            let start: i64 = redis::from_redis_value(fields.next()?).ok()?;
            let end: i64 = redis::from_redis_value(fields.next()?).ok()?;
            let redis::Value::Array(primary) = fields.next()? else {
                return None;
            };
            let id: String = redis::from_redis_value(primary.into_iter().nth(2)?).ok()?;
            Some((u16::try_from(start).ok()?, u16::try_from(end).ok()?, id))
        })
        .collect()
}

/// The Redis Cluster slot of `key`: CRC16 (XMODEM) of its hash tag (the part between the first `{`
/// and the next `}`, when not empty) or of the whole key, modulo 16384.
fn slot(key: &[u8]) -> u16 {
    let hashed = key
        .iter()
        .position(|&byte| byte == b'{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            let close = rest.iter().position(|&byte| byte == b'}')?;
            (close > 0).then(|| &rest[..close])
        })
        .unwrap_or(key);
    let mut crc: u16 = 0;
    for &byte in hashed {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % 16_384
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster() {
        // Values from `CLUSTER KEYSLOT`.
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"somekey"), 11058);
        assert_eq!(slot(b"bar"), 5061);
        // Hash tags, as the cluster specification's examples read them.
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        assert_eq!(slot(b"foo{bar}{zap}"), slot(b"bar"));
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
        assert_ne!(
            slot(b"foo{}{bar}"),
            slot(b"bar"),
            "an empty tag hashes the whole key"
        );
    }

    #[test]
    fn a_short_primary_gets_one_probe_at_a_time_and_others_go_on() {
        let primaries = Primaries::default();
        let bound = Duration::from_secs(1);
        // Learn two nodes: "a" short, "b" fine.
        primaries
            .admit("k", false, bound)
            .unwrap()
            .finish(Some("a"), false);
        let probe = primaries.admit("k", false, bound).expect("one probe goes");
        assert!(primaries.admit("k", false, bound).is_none(), "only one");
        drop(probe);
        let probe = primaries
            .admit("k", false, bound)
            .expect("a dropped probe frees its turn");
        probe.finish(Some("a"), true);
        assert!(primaries.admit("k", false, bound).is_some());
        assert!(
            primaries.admit("k", false, bound).is_some(),
            "confirmed: all go"
        );
    }

    #[test]
    fn the_slots_asked_for_gate_every_bucket_of_a_short_node() {
        let primaries = Primaries::default();
        let bound = Duration::from_secs(1);
        assert!(primaries.should_ask());
        assert!(!primaries.should_ask(), "once, until out of date");
        primaries.learn(&[(0, 8191, "a".into()), (8192, 16383, "b".into())]);
        // A write for "foo" (slot 12182, node b) fails: b is probed, a is not.
        primaries
            .admit("foo", true, bound)
            .unwrap()
            .finish(None, false);
        let probe = primaries.admit("foo", true, bound).expect("a probe");
        assert!(
            primaries.admit("somekey", true, bound).is_none(),
            "slot 11058 is b's too"
        );
        assert!(
            primaries.admit("bar", true, bound).is_some(),
            "slot 5061 is a's"
        );
        drop(probe);
        // The failure made what is known out of date: asked again once a second has passed.
        assert!(!primaries.should_ask());
    }

    #[test]
    fn a_failed_write_makes_its_node_probed() {
        let primaries = Primaries::default();
        let bound = Duration::from_secs(1);
        primaries
            .admit("k", true, bound)
            .unwrap()
            .finish(Some("a"), true);
        primaries
            .admit("k", true, bound)
            .unwrap()
            .finish(None, false);
        let probe = primaries.admit("k", true, bound).expect("a probe");
        assert!(primaries.admit("k", true, bound).is_none());
        // The slots moved to "b", which confirms: the bucket follows, and "a" is cleared too.
        probe.finish(Some("b"), true);
        assert!(primaries.admit("k", true, bound).is_some());
        assert!(primaries.admit("k", true, bound).is_some());
    }
}
