// Looping of the clock stage: a state's local time advanced by a frame and wrapped or clamped by
// its loop mode. CPU mirror: cpu::looping.

#define_import_path wgpu_anim::looping

#import wgpu_anim::types::{LOOP_ONCE, LOOP_REPEAT, Ticks}
#import wgpu_anim::ticks::{i64_add, i64_clamp, i64_neg, tick_limit, ticks_get, ticks_of, ticks_to_f32, wrap_ticks}

struct ClipTime {
    time: Ticks,
    loops: u32,
    sample_time: f32,
    phase: f32,
}

// Advances a local time (`time` within loop `loops`) by `delta` ticks on a state of `period`
// ticks (`duration` seconds or cycles) and applies the loop mode.
fn advance_clip_time(time: Ticks, loops_in: u32, delta: vec2<u32>, loop_mode: u32, loop_count: u32, duration: f32, period: vec2<u32>) -> ClipTime {
    let limit = tick_limit();
    let x = i64_add(i64_clamp(ticks_get(time), i64_neg(limit), limit), i64_clamp(delta, i64_neg(limit), limit));
    var t = x;
    var loops = loops_in;
    if (loop_mode == LOOP_ONCE) {
        t = i64_clamp(x, vec2<u32>(0u, 0u), period);
    } else {
        let w = wrap_ticks(x, period);
        t = w.r;
        if (loop_mode == LOOP_REPEAT) {
            let n = max(loop_count, 1u);
            if (loops >= n || (w.q >= 0 && u32(w.q) >= n - loops)) {
                t = period;
                loops = n - 1u;
            } else if (w.q < 0 && u32(-w.q) > loops) {
                t = vec2<u32>(0u, 0u);
                loops = 0u;
            } else {
                loops = loops + bitcast<u32>(w.q);
            }
        } else {
            loops = loops + bitcast<u32>(w.q);
        }
    }
    let sample_time = clamp(ticks_to_f32(t), 0.0, duration);
    return ClipTime(ticks_of(t), loops, sample_time, sample_time / duration);
}

// Where a state stands before its frame's step: as it is, or, when it started this frame, at its
// start wrapped or clamped by the loop mode (as Rust's start_clip_time), so that a reverse clip
// started past its end takes its first step from the end, and a forward one started before 0
// from 0.
fn frame_start_time(time: Ticks, loops: u32, started: bool, loop_mode: u32, loop_count: u32, duration: f32, period: vec2<u32>) -> ClipTime {
    if (started) {
        return advance_clip_time(time, loops, vec2<u32>(0u, 0u), loop_mode, loop_count, duration, period);
    }
    return ClipTime(time, loops, 0.0, 0.0);
}
