//! Mirror of the skinning module (`shaders/skinning_module.wgsl`) and the `skin` compute entry of
//! `shaders/skin.wgsl`. The stage's entry point [`skin`] checks the vertices against the palettes,
//! then runs [`kernel`].

use crate::error::{Error, Result};
use crate::math::Affine;
use crate::mesh::SkinVertex;
use glam::{Vec3, Vec4};

/// A skinned vertex: model-space position and unit normal. WGSL `SkinnedOut` (vec4-padded).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SkinnedPoint {
    /// xyz: position; w: 1.
    pub position: Vec4,
    /// xyz: unit normal; w: 0.
    pub normal: Vec4,
}

fn skin_blend(palettes: &[Affine], offset: u32, joints: [u16; 4], w: [f32; 4]) -> Affine {
    let m = |k: usize| palettes[(offset + u32::from(joints[k])) as usize];
    let (a, b, c, d) = (m(0), m(1), m(2), m(3));
    Affine {
        x: a.x * w[0] + b.x * w[1] + c.x * w[2] + d.x * w[3],
        y: a.y * w[0] + b.y * w[1] + c.y * w[2] + d.y * w[3],
        z: a.z * w[0] + b.z * w[1] + c.z * w[2] + d.z * w[3],
    }
}

/// The normal through the cofactor (inverse transpose up to a positive factor) of `m`'s 3×3 part.
/// WGSL `wgpu_anim_transform_normal`.
#[must_use]
pub fn affine_transform_normal(m: &Affine, n: Vec3) -> Vec3 {
    let c0 = Vec3::new(m.x.x, m.y.x, m.z.x);
    let c1 = Vec3::new(m.x.y, m.y.y, m.z.y);
    let c2 = Vec3::new(m.x.z, m.y.z, m.z.z);
    let cof = c1.cross(c2) * n.x + c2.cross(c0) * n.y + c0.cross(c1) * n.z;
    if c0.dot(c1.cross(c2)) < 0.0 {
        return -cof;
    }
    cof
}

/// One vertex skinned by the palette at `offset`: WGSL `wgpu_anim_skin_matrix_at`, then the
/// point and the normalized normal through it, as the `skin` entry and the built-in renderer do.
#[must_use]
pub(crate) fn skin_vertex(palettes: &[Affine], offset: u32, v: &SkinVertex) -> SkinnedPoint {
    let k = skin_blend(palettes, offset, v.joints, v.weights);
    let p = k.transform_point3(Vec3::from(v.position));
    let n = affine_transform_normal(&k, Vec3::from(v.normal)).normalize();
    SkinnedPoint {
        position: p.extend(1.0),
        normal: n.extend(0.0),
    }
}

/// The check of [`skin`] and `skin_vertex`: the palettes at `offset` hold every joint `vertices`
/// name.
fn check(palettes: &[Affine], offset: u32, vertices: &[SkinVertex]) -> Result<()> {
    for (k, v) in vertices.iter().enumerate() {
        if let Some(&j) = v.joints.iter().max() {
            if u64::from(offset) + u64::from(j) >= palettes.len() as u64 {
                return Err(Error::Limit {
                    what: format!(
                        "vertex {k} names joint {j}; palettes from {offset} hold {}",
                        palettes.len().saturating_sub(offset as usize)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Stage `skin` (compute form): every vertex skinned by the palette at `joint_offset`.
///
/// Errors ([`Error::Limit`]): a vertex naming a joint past the palettes.
pub fn skin(palettes: &[Affine], joint_offset: u32, vertices: &[SkinVertex]) -> Result<Vec<SkinnedPoint>> {
    check(palettes, joint_offset, vertices)?;
    Ok(kernel(palettes, joint_offset, vertices))
}

/// Stage `skin`'s body, unchecked.
#[must_use]
pub(crate) fn kernel(palettes: &[Affine], joint_offset: u32, vertices: &[SkinVertex]) -> Vec<SkinnedPoint> {
    vertices
        .iter()
        .map(|v| skin_vertex(palettes, joint_offset, v))
        .collect()
}

/// The checked form of [`skin_vertex`], public as `cpu::skin_vertex`.
pub(crate) mod checked {
    use super::{SkinnedPoint, check};
    use crate::error::Result;
    use crate::math::Affine;
    use crate::mesh::SkinVertex;

    /// One vertex skinned by the palette at `offset`: WGSL `wgpu_anim_skin_matrix_at`, then the
    /// point and the normalized normal through it, as the `skin` entry and the built-in renderer do.
    ///
    /// Errors ([`Error::Limit`](crate::Error::Limit)): a joint of the vertex past the palettes.
    pub fn skin_vertex(palettes: &[Affine], offset: u32, v: &SkinVertex) -> Result<SkinnedPoint> {
        check(palettes, offset, std::slice::from_ref(v))?;
        Ok(super::skin_vertex(palettes, offset, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Transform;
    use glam::Quat;

    #[test]
    fn non_uniform_scale_keeps_normals_perpendicular_to_the_surface() {
        // A 45° slope in the xy plane, squashed 4× along y: the true normal follows the
        // inverse transpose, not the matrix itself.
        let m = Affine::from_mat4(&Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::new(1.0, 0.25, 1.0)).to_mat4());
        let tangent = m.transform_vector3(Vec3::new(1.0, -1.0, 0.0));
        let n = affine_transform_normal(&m, Vec3::new(1.0, 1.0, 0.0).normalize()).normalize();
        assert!(n.dot(tangent).abs() < 1e-6, "{n:?} vs {tangent:?}");
        let naive = m.transform_vector3(Vec3::new(1.0, 1.0, 0.0));
        assert!(naive.dot(tangent).abs() > 0.1, "the naive transform is wrong here");
    }
}
