//! Mirror of the skinning module (`shaders/skinning_module.wgsl`) and the `skin` compute entry of
//! `shaders/skin.wgsl`. The stage's entry point [`skin`] checks the vertices against the palettes,
//! then runs [`kernel`].

use crate::error::{Error, Result};
use crate::math::{Affine, DualQuat, quat_rotate};
use crate::mesh::SkinVertex;
use glam::{Mat3, Vec3, Vec4};

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

/// Up to four joints' skinning blended as dual quaternions (WGSL `wgpu_anim_DualBlend`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualBlend {
    /// The blended rotation, a unit quaternion (x, y, z, w).
    pub real: Vec4,
    /// The blended dual part (divided by the same length as `real`).
    pub dual: Vec4,
    /// The stretches (scale and shear) summed by weight.
    pub stretch: Mat3,
}

/// The dual-quaternion blend of up to four entries of `dual` from `offset` (Kavan et al. 2008,
/// two-phase): the rigid parts summed by weight, each turned to the heaviest influence's
/// hemisphere, and normalized; the stretches summed by weight. WGSL `wgpu_anim_dual_blend_at`.
#[must_use]
pub fn dual_blend(dual: &[DualQuat], offset: u32, joints: [u16; 4], weights: [f32; 4]) -> DualBlend {
    let e = |k: usize| dual[(offset + u32::from(joints[k])) as usize];
    let (a, b, c, d) = (e(0), e(1), e(2), e(3));
    let mut pivot = a.real;
    let mut top = weights[0];
    if weights[1] > top {
        pivot = b.real;
        top = weights[1];
    }
    if weights[2] > top {
        pivot = c.real;
        top = weights[2];
    }
    if weights[3] > top {
        pivot = d.real;
    }
    let signed = |q: &DualQuat, w: f32| if q.real.dot(pivot) < 0.0 { -w } else { w };
    let w = [
        signed(&a, weights[0]),
        signed(&b, weights[1]),
        signed(&c, weights[2]),
        signed(&d, weights[3]),
    ];
    let real = a.real * w[0] + b.real * w[1] + c.real * w[2] + d.real * w[3];
    let dual = a.dual * w[0] + b.dual * w[1] + c.dual * w[2] + d.dual * w[3];
    let len = real.length();
    let inv = if len > 0.0 { 1.0 / len } else { 0.0 };
    let sd = a.stretch_diagonal * weights[0]
        + b.stretch_diagonal * weights[1]
        + c.stretch_diagonal * weights[2]
        + d.stretch_diagonal * weights[3];
    let so = a.stretch_off * weights[0]
        + b.stretch_off * weights[1]
        + c.stretch_off * weights[2]
        + d.stretch_off * weights[3];
    let stretch = Mat3::from_cols(
        Vec3::new(sd.x, so.x, so.y),
        Vec3::new(so.x, sd.y, so.z),
        Vec3::new(so.y, so.z, sd.z),
    );
    DualBlend {
        real: real * inv,
        dual: dual * inv,
        stretch,
    }
}

/// A point through a dual-quaternion blend: stretched, rotated, translated. WGSL
/// `wgpu_anim_dual_transform_point`.
#[must_use]
pub fn dual_transform_point(b: &DualBlend, p: Vec3) -> Vec3 {
    let (r, d) = (b.real, b.dual);
    let t = (d.truncate() * r.w - r.truncate() * d.w + r.truncate().cross(d.truncate())) * 2.0;
    quat_rotate(r, b.stretch * p) + t
}

/// A normal through a dual-quaternion blend: the stretch's cofactor, then the rotation; not
/// normalized. WGSL `wgpu_anim_dual_transform_normal`.
#[must_use]
pub fn dual_transform_normal(b: &DualBlend, n: Vec3) -> Vec3 {
    let s = Affine {
        x: b.stretch.x_axis.extend(0.0),
        y: b.stretch.y_axis.extend(0.0),
        z: b.stretch.z_axis.extend(0.0),
    };
    quat_rotate(b.real, affine_transform_normal(&s, n))
}

/// One vertex skinned `amount` by dual quaternions and `1 − amount` by linear blending, from
/// the palettes and dual palettes at `offset`: 0 (or less) is [`skin_vertex`] alone, 1 (or more)
/// dual quaternions alone, between the two results mixed and the normal normalized after. WGSL
/// `wgpu_anim_skin_blended_at`.
#[must_use]
pub(crate) fn skin_vertex_blended(
    palettes: &[Affine],
    dual: &[DualQuat],
    offset: u32,
    v: &SkinVertex,
    amount: f32,
) -> SkinnedPoint {
    if amount.is_nan() || amount <= 0.0 {
        return skin_vertex(palettes, offset, v);
    }
    let b = dual_blend(dual, offset, v.joints, v.weights);
    let p = dual_transform_point(&b, Vec3::from(v.position));
    let n = dual_transform_normal(&b, Vec3::from(v.normal)).normalize();
    if amount >= 1.0 {
        return SkinnedPoint {
            position: p.extend(1.0),
            normal: n.extend(0.0),
        };
    }
    let linear = skin_vertex(palettes, offset, v);
    // WGSL `mix(a, b, t)`: a · (1 − t) + b · t.
    let position = linear.position.truncate() * (1.0 - amount) + p * amount;
    let normal = (linear.normal.truncate() * (1.0 - amount) + n * amount).normalize();
    SkinnedPoint {
        position: position.extend(1.0),
        normal: normal.extend(0.0),
    }
}

/// The check of [`skin`] and `skin_vertex`: the palettes at `offset` hold every joint `vertices`
/// name.
fn check(palettes: usize, offset: u32, vertices: &[SkinVertex]) -> Result<()> {
    for (k, v) in vertices.iter().enumerate() {
        if let Some(&j) = v.joints.iter().max() {
            if u64::from(offset) + u64::from(j) >= palettes as u64 {
                return Err(Error::Limit {
                    what: format!(
                        "vertex {k} names joint {j}; palettes from {offset} hold {}",
                        palettes.saturating_sub(offset as usize)
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
    check(palettes.len(), joint_offset, vertices)?;
    Ok(kernel(palettes, joint_offset, vertices))
}

/// Stage `skin` (compute form) with dual quaternions: every vertex skinned `dual_amount` by the
/// dual palettes and `1 − dual_amount` by the palettes at `joint_offset`
/// (each vertex as WGSL `wgpu_anim_skin_blended_at`: 0 or less linear blending alone, 1 or more
/// dual quaternions alone, between the two results mixed; WGSL `skin` with
/// `WGPU_ANIM_DUAL_QUATERNION`).
///
/// Errors ([`Error::Limit`]): a vertex naming a joint past the palettes, or, with a
/// `dual_amount` above 0, past the dual palettes.
pub fn skin_blended(
    palettes: &[Affine],
    dual: &[DualQuat],
    joint_offset: u32,
    dual_amount: f32,
    vertices: &[SkinVertex],
) -> Result<Vec<SkinnedPoint>> {
    check(palettes.len(), joint_offset, vertices)?;
    if dual_amount > 0.0 {
        check(dual.len(), joint_offset, vertices)?;
    }
    Ok(vertices
        .iter()
        .map(|v| skin_vertex_blended(palettes, dual, joint_offset, v, dual_amount))
        .collect())
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
        check(palettes.len(), offset, std::slice::from_ref(v))?;
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
