//! Mirror of `shaders/shared/events.wgsl`: the times a state crossed a clip event, and the event
//! log they are appended to.

use super::looping::ClipTime;
use super::ticks::{floor_small, ticks_from_f32};
use crate::layout::{GpuEventRecord, LOOP_FOREVER, LOOP_REPEAT, Ticks};
use crate::library::AnimationLibrary;

/// Times a state's playback crossed the point `e` of its loop (ticks in `[0, period]`) in a frame
/// that moved it by `delta` from `t0` in loop `loops0` to `t1` in loop `loops1`. The points are
/// `e + k · period` for the loops `k` that play — every one looping forever, one for
/// `LOOP_ONCE`, `loop_count` for `LOOP_REPEAT`; forward it counts those in `(from, to]`,
/// backward those in `[to, from)`, so consecutive frames never count a point twice; a state
/// that `started` this frame counts its start. Integer arithmetic only. WGSL `event_crossings`.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
#[must_use]
pub fn event_crossings(
    t0: i64,
    loops0: u32,
    t1: i64,
    loops1: u32,
    delta: i64,
    e: i64,
    period: i64,
    loop_mode: u32,
    loop_count: u32,
    started: bool,
) -> u32 {
    if delta == 0 {
        return 0;
    }
    let dl = loops1.wrapping_sub(loops0) as i32;
    let (mut first, mut last);
    if delta < 0 {
        let from = if started { t0.wrapping_add(1) } else { t0 };
        first = dl.wrapping_sub(floor_small(e.wrapping_sub(t1), period));
        last = -floor_small(e.wrapping_sub(from), period) - 1;
    } else {
        let from = if started { t0.wrapping_sub(1) } else { t0 };
        first = floor_small(from.wrapping_sub(e), period) + 1;
        last = dl.wrapping_add(floor_small(t1.wrapping_sub(e), period));
    }
    if loop_mode != LOOP_FOREVER {
        let n = if loop_mode == LOOP_REPEAT { loop_count.max(1) } else { 1 };
        first = first.max(-(loops0.min(0x7fff_ffff) as i32));
        last = last.min((n - 1 - loops0.min(n - 1)).min(0x7fff_ffff) as i32);
    }
    last.wrapping_sub(first).wrapping_add(1).max(0) as u32
}

/// The event log as the CPU mirror fills it (WGSL `EventLog`): the records appended, in the order
/// this mirror appends them (the GPU's threads append in any order: compare sorted), up to
/// `capacity`, and those past it counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventLog {
    /// Most records kept.
    pub capacity: usize,
    /// The records.
    pub records: Vec<GpuEventRecord>,
    /// Records that did not fit.
    pub overflow: u32,
}

impl EventLog {
    /// An empty log of `capacity` records.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            ..Self::default()
        }
    }

    /// WGSL `append_event`.
    pub(crate) fn append(&mut self, record: GpuEventRecord) {
        if self.records.len() < self.capacity {
            self.records.push(record);
        } else {
            self.overflow = self.overflow.wrapping_add(1);
        }
    }
}

/// Who a state's events are reported for, and whether its root motion counts. WGSL
/// `EventSource` (with the frame's number).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventSource {
    pub character: u32,
    pub state: u32,
    pub started: bool,
    pub weight: f32,
    pub root: bool,
    pub frame: u32,
}

/// Fires clip `clip`'s events crossed by a state that moved from `(t0, loops0)` to `ct`. WGSL
/// `fire_events`.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
pub(crate) fn fire_events(
    lib: &AnimationLibrary,
    log: &mut EventLog,
    source: &EventSource,
    clip: u32,
    weight: f32,
    t0: Ticks,
    loops0: u32,
    ct: &ClipTime,
    delta: i64,
    period: i64,
    loop_mode: u32,
    loop_count: u32,
    phase: bool,
) {
    let info = &lib.clips()[clip as usize];
    for k in 0..info.event_count {
        let event = &lib.events()[(info.event_offset + k) as usize];
        if !(weight > 0.0 && weight >= event.threshold) {
            continue;
        }
        let at = if phase { event.time / info.duration } else { event.time };
        let n = event_crossings(
            t0.get(),
            loops0,
            ct.time.get(),
            ct.loops,
            delta,
            ticks_from_f32(at),
            period,
            loop_mode,
            loop_count,
            source.started,
        );
        if n > 0 {
            log.append(GpuEventRecord {
                character: source.character,
                event: event.name,
                clip,
                weight,
                frame: source.frame,
                crossings: n,
                state: source.state,
                _pad: 0,
            });
        }
    }
}
