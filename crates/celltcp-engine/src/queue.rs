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

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so that the smallest (time, seq) is on top.
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// A priority queue of events ordered by `(time, insertion sequence)`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
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
        EventQueue { heap: BinaryHeap::new(), next_seq: 0, now: SimTime::ZERO, popped: 0 }
    }

    /// The time of the last popped event.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `time` (clamped to `now`).
    pub fn push(&mut self, time: SimTime, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let time = time.max(self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// Removes and returns the earliest event, advancing `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
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
}
