//! Mirror of the skinning module's `wgpu_anim_morph` (`shaders/skinning_module.wgsl`): a vertex
//! moved by an instance's morph weights, read from the same words the GPU reads; and the
//! weights blended from the clips' weight tracks (`sample`'s step over a page is
//! `cpu::sample::morph_weights`).

use glam::Vec3;

/// A bind-pose vertex with its morph targets' displacements added. WGSL `wgpu_anim_Morphed`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Morphed {
    /// Position.
    pub position: Vec3,
    /// Normal, not normalized.
    pub normal: Vec3,
    /// Tangent (xyz).
    pub tangent: Vec3,
}

fn vec3(w: [u32; 4]) -> Vec3 {
    Vec3::new(f32::from_bits(w[0]), f32::from_bits(w[1]), f32::from_bits(w[2]))
}

/// Vertex `vertex` morphed by `weights` (an instance's weights in use, `morph_count` of them)
/// from `words` ([`crate::MorphSet::words`]): every entry of the vertex whose target has a
/// non-zero weight adds its displacements times the weight, in target order. WGSL
/// `wgpu_anim_morph`. Words that are not a packed set (cut short, say) end the sum where they
/// run out, as the GPU's bounds-checked reads would leave it: no panic.
#[must_use]
pub fn morph(words: &[[u32; 4]], weights: &[f32], vertex: u32, position: Vec3, normal: Vec3, tangent: Vec3) -> Morphed {
    let mut out = Morphed {
        position,
        normal,
        tangent,
    };
    let count = weights.len() as u32;
    let Some(&header) = words.first() else { return out };
    if count == 0 || vertex >= header[0] {
        return out;
    }
    let Some(&pair) = words.get(1 + vertex as usize / 2) else {
        return out;
    };
    let (first, n) = if vertex & 1 == 1 {
        (pair[2], pair[3])
    } else {
        (pair[0], pair[1])
    };
    let word = |e: usize| words.get(e).copied();
    for k in 0..n as usize {
        let e = header[3] as usize + (first as usize + k) * header[2] as usize;
        let Some(head) = word(e) else { break };
        if head[3] >= count {
            break;
        }
        let w = weights[head[3] as usize];
        if w == 0.0 {
            continue;
        }
        out.position += w * vec3(head);
        out.normal += w * word(e + 1).map_or(Vec3::ZERO, vec3);
        if header[2] > 2 {
            out.tangent += w * word(e + 2).map_or(Vec3::ZERO, vec3);
        }
    }
    out
}

/// The `skin` entry of `shaders/skin.wgsl` with `WGPU_ANIM_MORPH`: every vertex morphed by
/// `weights` (the instance's in use, [`crate::layout::GpuInstance::morph_count`] of them) from
/// `words`, then skinned as [`super::skin_blended`] skins (`dual_amount` by dual quaternions).
///
/// Errors: as [`super::skin_blended`].
pub fn skin_morphed(
    palettes: &[crate::math::Affine],
    dual: &[crate::math::DualQuat],
    joint_offset: u32,
    dual_amount: f32,
    words: &[[u32; 4]],
    weights: &[f32],
    vertices: &[crate::mesh::SkinVertex],
) -> crate::Result<Vec<super::SkinnedPoint>> {
    let morphed: Vec<crate::mesh::SkinVertex> = vertices
        .iter()
        .enumerate()
        .map(|(v, x)| {
            let m = morph(words, weights, v as u32, x.position.into(), x.normal.into(), Vec3::X);
            crate::mesh::SkinVertex {
                position: m.position.to_array(),
                normal: m.normal.to_array(),
                ..*x
            }
        })
        .collect();
    super::skin_blended(palettes, dual, joint_offset, dual_amount, &morphed)
}

/// Target `t`'s weight in clip `clip` at `time`, and whether the clip drives it. WGSL
/// `morph_value` (`shaders/sample.wgsl`).
fn morph_value(lib: &crate::AnimationLibrary, clip: u32, t: u32, time: f32) -> (f32, bool) {
    use crate::layout::{CLIP_CURVE_SHIFT, CLIP_MORPH_SHIFT, SNAPSHOT_CLIP};
    if clip == SNAPSHOT_CLIP {
        return (0.0, false);
    }
    let info = &lib.clips()[clip as usize];
    if t >= info.flags >> CLIP_MORPH_SHIFT {
        return (0.0, false);
    }
    let curves = ((info.flags >> CLIP_CURVE_SHIFT) & 0xff).count_ones();
    let track = &lib.tracks()[(info.track_offset + 3 * info.joint_count + curves + t) as usize];
    if track.key_count == 0 {
        return (0.0, false);
    }
    (
        super::sample::sample_track(lib.times(), lib.values(), track, time, false).x,
        true,
    )
}

/// A mask's weight of morph target `t`: 1 without a mask or past its target weights. WGSL
/// `mask_target_weight` (`shaders/sample.wgsl`).
fn mask_target_weight(lib: &crate::AnimationLibrary, mask: u32, t: u32) -> f32 {
    if mask == crate::layout::NO_MASK {
        return 1.0;
    }
    let head = lib.values()[mask as usize];
    if t as f32 >= head.z {
        return 1.0;
    }
    lib.values()[(mask + t) as usize].y
}

/// An instance's morph weights in use this frame, blended as its pose from its blend list (the
/// clock stage's), its own weights `own` (as many as its `morph_count`) and its snapshot
/// `snapshot` (as many; the weights kept on the frame before an interrupting cross-fade): per
/// target, over the base samples each clip's track where it drives the target, the snapshot's
/// weight for the snapshot and `own` where no track drives it, weighted and normalized (`own`
/// alone when neither drives it); then each layer's weighted mean of the
/// tracks its clips have (a clip without one counting 0), by the layer's weight times its mask's
/// weight of the target, lerped in (override) or added (additive). WGSL `blend_morph_weight`
/// (`shaders/sample.wgsl`).
#[must_use]
pub fn blend_morph_weights(
    lib: &crate::AnimationLibrary,
    list: &crate::layout::BlendList,
    own: &[f32],
    snapshot: &[f32],
) -> Vec<f32> {
    use crate::layout::{MAX_LAYERS, SNAPSHOT_CLIP, layer_mode};
    let samples = &list.samples[..list.count as usize];
    own.iter()
        .enumerate()
        .map(|(t, &own)| {
            let kept = snapshot.get(t).copied().unwrap_or(0.0);
            let t = t as u32;
            let (mut sum, mut total, mut driven) = (0.0f32, 0.0f32, false);
            for s in samples.iter().filter(|s| s.layer == 0) {
                total += s.weight;
                let (v, present) = if s.clip == SNAPSHOT_CLIP {
                    (kept, true)
                } else {
                    morph_value(lib, s.clip, t, s.time)
                };
                driven |= present;
                sum += s.weight * if present { v } else { own };
            }
            let mut out = if driven && total > 0.0 { sum / total } else { own };
            for l in 0..MAX_LAYERS {
                let apply = list.layers[l as usize];
                if apply.mode == layer_mode::OFF {
                    continue;
                }
                let (mut layer_sum, mut weight, mut present) = (0.0f32, 0.0f32, false);
                for s in samples.iter().filter(|s| s.layer == l + 1) {
                    weight += s.weight;
                    let (v, p) = morph_value(lib, s.clip, t, s.time);
                    present |= p;
                    layer_sum += s.weight * v;
                }
                if weight.is_nan() || weight <= 0.0 || !present {
                    continue;
                }
                let v = layer_sum / weight;
                let b = apply.weight * mask_target_weight(lib, apply.mask, t);
                if apply.mode == layer_mode::OVERRIDE {
                    // WGSL mix(a, b, t) = a * (1 - t) + b * t.
                    out = out * (1.0 - b) + v * b;
                } else {
                    out += b * v;
                }
            }
            out
        })
        .collect()
}
