// Float curves of the clock stage: each curve of a character's clips blended as its pose. CPU
// mirror: cpu::curves.

#define_import_path wgpu_anim::curves

#import wgpu_anim::types::{BlendList, CLIP_CURVE_SHIFT, LAYER_OFF, LAYER_OVERRIDE, MAX_CURVES, MAX_LAYERS, SNAPSHOT_CLIP}
#import wgpu_anim::library::{clip_info, sample_track, track_at}

// Curve name `c` of clip `clip` at `t` seconds; `present` says whether the clip has it (else 0).
struct CurveValue {
    value: f32,
    present: bool,
}

fn curve_value(clip: u32, c: u32, t: f32) -> CurveValue {
    let info = clip_info(clip);
    let mask = info.flags >> CLIP_CURVE_SHIFT;
    if (((mask >> c) & 1u) == 0u) {
        return CurveValue(0.0, false);
    }
    let k = countOneBits(mask & ((1u << c) - 1u));
    let track = track_at(info.track_offset + 3u * info.joint_count + k);
    return CurveValue(sample_track(track, t, false).x, true);
}

// The character's float curves this frame, blended as its pose: the base samples weighted and
// normalized (a clip without a curve, or the snapshot, counts 0); then each layer in order, its
// own samples' weighted mean, for the curves its clips have: lerped in by the layer's weight
// (override) or added times it (additive).
fn blend_curves(list: ptr<function, BlendList>) -> array<f32, MAX_CURVES> {
    var out: array<f32, MAX_CURVES>;
    var base_weight = 0.0;
    for (var k = 0u; k < (*list).count; k++) {
        let s = (*list).samples[k];
        if (s.layer != 0u) {
            continue;
        }
        base_weight += s.weight;
        if (s.clip == SNAPSHOT_CLIP) {
            continue;
        }
        for (var c = 0u; c < MAX_CURVES; c++) {
            out[c] += s.weight * curve_value(s.clip, c, s.time).value;
        }
    }
    if (base_weight > 0.0) {
        for (var c = 0u; c < MAX_CURVES; c++) {
            out[c] /= base_weight;
        }
    }
    for (var l = 0u; l < MAX_LAYERS; l++) {
        let apply = (*list).layers[l];
        if (apply.mode == LAYER_OFF) {
            continue;
        }
        var sum: array<f32, MAX_CURVES>;
        var present: array<bool, MAX_CURVES>;
        var weight = 0.0;
        for (var k = 0u; k < (*list).count; k++) {
            let s = (*list).samples[k];
            if (s.layer != l + 1u) {
                continue;
            }
            weight += s.weight;
            for (var c = 0u; c < MAX_CURVES; c++) {
                let v = curve_value(s.clip, c, s.time);
                sum[c] += s.weight * v.value;
                present[c] = present[c] || v.present;
            }
        }
        if (!(weight > 0.0)) {
            continue;
        }
        for (var c = 0u; c < MAX_CURVES; c++) {
            if (!present[c]) {
                continue;
            }
            let v = sum[c] / weight;
            if (apply.mode == LAYER_OVERRIDE) {
                out[c] = mix(out[c], v, apply.weight);
            } else {
                out[c] += apply.weight * v;
            }
        }
    }
    return out;
}
