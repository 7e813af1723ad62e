//! Mirror of the skinning module's `wgpu_anim_morph` (`shaders/skinning_module.wgsl`): a vertex
//! moved by an instance's morph weights, read from the same words the GPU reads.

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
/// `wgpu_anim_morph`.
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
    let pair = words[1 + vertex as usize / 2];
    let (first, n) = if vertex & 1 == 1 {
        (pair[2], pair[3])
    } else {
        (pair[0], pair[1])
    };
    for k in 0..n {
        let e = (header[3] + (first + k) * header[2]) as usize;
        let head = words[e];
        if head[3] >= count {
            break;
        }
        let w = weights[head[3] as usize];
        if w == 0.0 {
            continue;
        }
        out.position += w * vec3(head);
        out.normal += w * vec3(words[e + 1]);
        if header[2] > 2 {
            out.tangent += w * vec3(words[e + 2]);
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
