//! Mirror of `shaders/shared/curves.wgsl`: a character's float curves blended as its pose.
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]

use crate::layout::{BlendList, CLIP_CURVE_SHIFT, MAX_CURVES, SNAPSHOT_CLIP, layer_mode};
use crate::library::AnimationLibrary;

/// Curve name `c` of clip `clip` at `t` seconds, and whether the clip has it. WGSL `curve_value`.
fn curve_value(lib: &AnimationLibrary, clip: u32, c: u32, t: f32) -> (f32, bool) {
    let info = &lib.clips()[clip as usize];
    let mask = info.flags >> CLIP_CURVE_SHIFT;
    if (mask >> c) & 1 == 0 {
        return (0.0, false);
    }
    let k = (mask & ((1 << c) - 1)).count_ones();
    let track = &lib.tracks()[(info.track_offset + 3 * info.joint_count + k) as usize];
    (
        super::sample::sample_track(lib.times(), lib.values(), track, t, false).x,
        true,
    )
}

/// A character's float curves blended as its pose: the base samples weighted and normalized,
/// then each layer's weighted mean lerped in (override) or added (additive) for the curves its
/// clips have. WGSL `blend_curves`.
#[must_use]
pub fn blend_curves(lib: &AnimationLibrary, list: &BlendList) -> [f32; MAX_CURVES as usize] {
    let mut out = [0.0f32; MAX_CURVES as usize];
    let mut base_weight = 0.0;
    for s in &list.samples[..list.count as usize] {
        if s.layer != 0 {
            continue;
        }
        base_weight += s.weight;
        if s.clip == SNAPSHOT_CLIP {
            continue;
        }
        for (c, o) in out.iter_mut().enumerate() {
            *o += s.weight * curve_value(lib, s.clip, c as u32, s.time).0;
        }
    }
    if base_weight > 0.0 {
        for o in &mut out {
            *o /= base_weight;
        }
    }
    for (l, apply) in list.layers.iter().enumerate() {
        if apply.mode == layer_mode::OFF {
            continue;
        }
        let mut sum = [0.0f32; MAX_CURVES as usize];
        let mut present = [false; MAX_CURVES as usize];
        let mut weight = 0.0;
        for s in &list.samples[..list.count as usize] {
            if s.layer != l as u32 + 1 {
                continue;
            }
            weight += s.weight;
            for c in 0..MAX_CURVES as usize {
                let (v, p) = curve_value(lib, s.clip, c as u32, s.time);
                sum[c] += s.weight * v;
                present[c] = present[c] || p;
            }
        }
        if !(weight > 0.0) {
            continue;
        }
        for c in 0..MAX_CURVES as usize {
            if !present[c] {
                continue;
            }
            let v = sum[c] / weight;
            if apply.mode == layer_mode::OVERRIDE {
                // WGSL mix(a, b, t) = a * (1 - t) + b * t.
                out[c] = out[c] * (1.0 - apply.weight) + v * apply.weight;
            } else {
                out[c] += apply.weight * v;
            }
        }
    }
    out
}
