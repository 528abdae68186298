//! The event queue.
//!
//! # Ordering contract
//!
//! Events pop in increasing `time`. Events scheduled for the *same* time pop in the order they
//! were pushed (FIFO): every push takes the next value of a 64-bit insertion counter `seq`, and the
//! heap orders by `(time, seq)`. No two entries share a `seq`, so the order is total and does not
//! depend on the heap's internal layout; the same sequence of pushes and pops always gives the same
//! sequence of events, which is what makes a run bit-reproducible. (ns-3's `EventKey` uses
//! `(ts, uid)` for the same reason.)
//!
//! Pushing an event in the past is a logic error; it is caught in debug builds and, in release
//! builds, the event runs at the current time (never earlier), keeping time monotone.
//!
//! # Implementation
//!
//! A 4-ary min-heap in a `Vec`, keyed by one `u128` `(time << 64) | seq`, so comparing two entries
//! is one 128-bit comparison. Four children per node halve the depth of a binary heap; a pop,
//! the hot path of every run, then touches half as many levels, whose four keys sit in two cache
//! lines. The order is that of the key alone, as above.

use crate::time::SimTime;

struct Entry<E> {
    /// `(time << 64) | seq`.
    key: u128,
    event: E,
}

/// Children per heap node.
const ARITY: usize = 4;

/// A priority queue of events ordered by `(time, insertion sequence)`.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: Vec::new(), next_seq: 0, now: SimTime::ZERO, popped: 0 }
    }

    /// The time of the last popped event.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `time` (clamped to `now`).
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let time = time.max(self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = ((time.as_nanos() as u128) << 64) | seq as u128;
        // Sift up: move parents down into the hole until the new key's place is found.
        let mut i = self.heap.len();
        self.heap.push(Entry { key, event });
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= key {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    /// Removes and returns the earliest event, advancing `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = std::mem::replace(&mut self.heap[0], last);
            self.sift_down_root();
            top
        };
        let time = SimTime((top.key >> 64) as u64);
        self.now = time;
        self.popped += 1;
        Some((time, top.event))
    }

    /// Restores the heap order after the root was replaced.
    #[inline]
    fn sift_down_root(&mut self) {
        let h = &mut self.heap;
        let n = h.len();
        let key = h[0].key;
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut m = first;
            let mut mk = h[first].key;
            for (k, e) in h[first + 1..end].iter().enumerate() {
                if e.key < mk {
                    m = first + 1 + k;
                    mk = e.key;
                }
            }
            if mk >= key {
                break;
            }
            h.swap(i, m);
            i = m;
        }
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| SimTime((e.key >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events popped so far (the "events processed" of a run's manifest).
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_fifo() {
        let mut q = EventQueue::new();
        for i in 0..100 {
            q.push(SimTime::from_millis(5), i);
        }
        q.push(SimTime::from_millis(1), -1);
        assert_eq!(q.pop(), Some((SimTime::from_millis(1), -1)));
        for i in 0..100 {
            assert_eq!(q.pop(), Some((SimTime::from_millis(5), i)));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn pops_in_time_order_and_advances_now() {
        let mut q = EventQueue::new();
        let times = [7u64, 3, 9, 1, 3, 8, 2];
        for (i, t) in times.iter().enumerate() {
            q.push(SimTime::from_micros(*t), i);
        }
        let mut last = (SimTime::ZERO, 0usize);
        let mut out = vec![];
        while let Some((t, i)) = q.pop() {
            assert!(t >= last.0);
            assert_eq!(q.now(), t);
            last = (t, i);
            out.push(i);
        }
        // the two events at t=3 keep their insertion order (1 before 4)
        assert_eq!(out, vec![3, 6, 1, 4, 0, 5, 2]);
        assert_eq!(q.events_processed(), 7);
    }

    #[test]
    fn matches_a_sort_by_time_then_insertion_on_random_interleavings() {
        // Against a reference: a stable sort by time of everything pushed so far. Pushes and pops
        // interleave, with many equal times, as in a run.
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next_id = 0u32;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) || reference.is_empty() {
                let t = q.now().as_nanos() + x % 50;
                q.push(SimTime(t), next_id);
                reference.push((t, next_id));
                next_id += 1;
            } else {
                reference.sort_by_key(|e| e.0);
                let want = reference.remove(0);
                assert_eq!(q.pop(), Some((SimTime(want.0), want.1)));
            }
        }
        reference.sort_by_key(|e| e.0);
        for want in reference {
            assert_eq!(q.pop(), Some((SimTime(want.0), want.1)));
        }
        assert!(q.is_empty());
    }
}
