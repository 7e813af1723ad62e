// Clip events of the clock stage: the times a state crossed an event this frame, and the records
// appended to the event log. CPU mirror: cpu::events.

#define_import_path wgpu_anim::events

#import wgpu_anim::types::{EventRecord, LOOP_FOREVER, LOOP_REPEAT, Ticks}
#import wgpu_anim::bindings::{event_log, frame}
#import wgpu_anim::library::{clip_event, clip_info}
#import wgpu_anim::ticks::{floor_small, i64_add, i64_neg, i64_negative, ticks_from_f32, ticks_get}
#import wgpu_anim::looping::ClipTime

// Times a state's playback crossed the point `e` of its loop (ticks, in [0, period]) this frame,
// moving by `delta` from `t0` in loop `loops0` to `t1` in loop `loops1`. The points are
// e + k period for loops k: every k looping forever, the loops that play otherwise (one for
// LOOP_ONCE, loop_count for LOOP_REPEAT). Forward it counts those in (from, to], backward those
// in [to, from): consecutive frames never count a point twice, and a state that started this
// frame counts its start as crossed. Integer arithmetic only, as the clock. CPU mirror:
// cpu::events::event_crossings.
fn event_crossings(t0: vec2<u32>, loops0: u32, t1: vec2<u32>, loops1: u32, delta: vec2<u32>, e: vec2<u32>, period: vec2<u32>, loop_mode: u32, loop_count: u32, started: bool) -> u32 {
    if (delta.x == 0u && delta.y == 0u) {
        return 0u;
    }
    // Loops moved, relative: a loop-forever count wraps.
    let dl = bitcast<i32>(loops1 - loops0);
    var start = t0;
    var first: i32;
    var last: i32;
    if (i64_negative(delta)) {
        if (started) {
            start = i64_add(t0, vec2<u32>(1u, 0u));
        }
        // k in [dl + ceil((t1 - e) / P), ceil((start - e) / P) - 1]
        first = dl - floor_small(i64_add(e, i64_neg(t1)), period);
        last = -floor_small(i64_add(e, i64_neg(start)), period) - 1;
    } else {
        if (started) {
            start = i64_add(t0, vec2<u32>(0xffffffffu, 0xffffffffu));
        }
        // k in [floor((start - e) / P) + 1, dl + floor((t1 - e) / P)]
        first = floor_small(i64_add(start, i64_neg(e)), period) + 1;
        last = dl + floor_small(i64_add(t1, i64_neg(e)), period);
    }
    if (loop_mode != LOOP_FOREVER) {
        // Only the loops that play: k + loops0 in [0, n - 1].
        var n = 1u;
        if (loop_mode == LOOP_REPEAT) {
            n = max(loop_count, 1u);
        }
        first = max(first, -i32(min(loops0, 0x7fffffffu)));
        last = min(last, i32(min(n - 1u - min(loops0, n - 1u), 0x7fffffffu)));
    }
    return u32(max(last - first + 1, 0));
}

// Who a state's events are reported for: the character, the state (0 the target, 1 the source,
// 2 + k layer k), whether the state started this frame, and the factor of its samples' weights
// (a layer's weight); and whether its clips' root motion moves the character (1 for the target
// and the source of a character with ROOT_MOTION).
struct EventSource {
    character: u32,
    state: u32,
    started: u32,
    weight: f32,
    root: u32,
}

// Appends a record to the event log; past its capacity, counts it as overflow instead.
fn append_event(record: EventRecord) {
    let slot = atomicAdd(&event_log.count, 1u);
    if (slot < arrayLength(&event_log.records)) {
        event_log.records[slot] = record;
    } else {
        atomicAdd(&event_log.overflow, 1u);
    }
}

// Fires clip `clip`'s events crossed by a state that moved from (t0, loops0) to `ct` by `delta`
// ticks on a period of `period` ticks: seconds for a clip state, a blend tree's phase when
// `phase` (then event times are divided by the clip's duration). `weight` is the clip's blend
// weight; an event fires only at its threshold or above.
fn fire_events(source: EventSource, clip: u32, weight: f32, t0: Ticks, loops0: u32, ct: ClipTime, delta: vec2<u32>, period: vec2<u32>, loop_mode: u32, loop_count: u32, phase: bool) {
    let info = clip_info(clip);
    for (var k = 0u; k < info.event_count; k++) {
        let event = clip_event(info.event_offset + k);
        if (!(weight > 0.0 && weight >= event.threshold)) {
            continue;
        }
        var at = event.time;
        if (phase) {
            at = event.time / info.duration;
        }
        let n = event_crossings(ticks_get(t0), loops0, ticks_get(ct.time), ct.loops, delta, ticks_from_f32(at), period, loop_mode, loop_count, source.started != 0u);
        if (n > 0u) {
            append_event(EventRecord(source.character, event.name, clip, weight, frame.frame, n, source.state, 0u));
        }
    }
}
