//! A stored resource with its creation sequence and its JSON, written once per change.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A resource with its creation sequence (the final sort tiebreak, so pages are stable even when two
/// resources share a millisecond) and its JSON, serialized once per change rather than once per read.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Record<T> {
    pub seq: u64,
    pub value: T,
    #[serde(skip)]
    pub json: Bytes,
}

impl<T: Serialize> Record<T> {
    pub fn new(seq: u64, value: T) -> Record<T> {
        let mut record = Record {
            seq,
            value,
            json: Bytes::new(),
        };
        record.refresh();
        record
    }

    pub fn set(&mut self, value: T) {
        self.value = value;
        self.refresh();
    }

    pub fn refresh(&mut self) {
        // Serializing the generated types cannot fail (no maps with non-string keys, no custom
        // serializers that error); an empty object is a safe fallback all the same.
        self.json = crate::wire::to_vec(&self.value)
            .map(Bytes::from)
            .unwrap_or_else(|_| Bytes::from_static(b"{}"));
    }
}
