//! How far a pose can reach: conservative bounds, in f64, of every value a frame computes, so
//! that an accepted asset or input never yields a non-finite or absurd pose.
//!
//! Every finite input can still overflow in a product (a scale of 1e20 under a scale of 1e20, an
//! inverse bind near `f32::MAX` times a model matrix). So the library builder, the importer and
//! the animator's API bound what enters the products through the hierarchy, not each value
//! alone:
//!
//! - each joint's **local extent**: the longest translation and the largest absolute scale
//!   component it takes in the rest pose and in any key of any clip of its skeleton (a cubic
//!   spline's overshoot between keys included). Blends, cross-fades and override layers mix
//!   poses convexly and stay within it; an additive layer adds its clip's translation (times a
//!   weight of at most 1) and multiplies the scale by at most `max(1, |s|)`;
//! - the **model extent** down the hierarchy: a joint's linear part is at most its parent's
//!   times its local scale (rotations keep lengths), its translation at most its parent's plus
//!   the parent's linear part times its local translation;
//! - the **skinning matrices** (model × inverse bind), the **sockets** (model × offset) and, for
//!   a mesh, every **skinned vertex** (the weighted sum of its skinning matrices' reach).
//!
//! Each of these must stay within [`MAX_REACH`], 1e12: a scene a million times the size of a
//! human (a few thousand kilometres) is far inside it, and values up to it leave f32 room for
//! every later product (a world matrix within it times a skinned vertex within it is 1e24, far
//! from f32's 3.4e38). The bound is a worst case, every key of every clip at its largest at
//! once: what it refuses could reach that far, though the poses actually played stay far below.
//! Additive layers compound: a random clip scaling every joint by up to 1.25, played as three
//! additive layers on a random skeleton a hundred joints deep, is now and then refused. What is
//! refused is named: the skeleton, clip, layer or mesh, the joint or vertex, and the bound it
//! would reach.

use glam::{DMat3, DVec3, Mat4, Vec4};

/// The largest length (scene units) or linear-part norm a model-space joint, a skinning
/// matrix, a socket or a skinned vertex may reach under any pose the library can play: 1e12.
pub const MAX_REACH: f64 = 1.0e12;

/// Whether `v` is within [`MAX_REACH`] (a NaN is not).
#[must_use]
pub fn within(v: f64) -> bool {
    v <= MAX_REACH
}

/// The first of `values` (its place and value) that is not finite or is larger in magnitude
/// than [`MAX_REACH`] by more than f32 rounding (one part in a thousand): what the fuzz targets,
/// the mutation test and the command-line tool check of every pose and skinned vertex the
/// library computes from an accepted asset.
pub fn first_beyond(values: impl IntoIterator<Item = f32>) -> Option<(usize, f32)> {
    values
        .into_iter()
        .enumerate()
        .find(|(_, v)| !within(f64::from(v.abs()) / 1.001))
}

/// A joint's local extremes over a set of poses: the longest translation and the largest
/// absolute scale component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Extent {
    /// The longest local translation.
    pub translation: f64,
    /// The largest absolute component of the local scale.
    pub scale: f64,
}

impl Extent {
    /// The extent of both.
    #[must_use]
    pub fn max(self, other: Extent) -> Extent {
        Extent {
            translation: self.translation.max(other.translation),
            scale: self.scale.max(other.scale),
        }
    }
}

/// The length of `v`'s xyz.
fn length(v: Vec4) -> f64 {
    DVec3::new(v.x.into(), v.y.into(), v.z.into()).length()
}

/// The largest absolute component of `v`'s xyz.
fn largest(v: Vec4) -> f64 {
    f64::from(v.x.abs().max(v.y.abs()).max(v.z.abs()))
}

/// The most `size` (a length or a largest component) reaches over a track of `times` and
/// `values` as the library stores it: one value per key, or for a cubic spline `[in tangent,
/// value, out tangent]` per key. Between two cubic keys the Hermite curve reaches at most the
/// larger value plus 4/27 of the span times the two tangents' sizes (4/27 bounds both tangent
/// basis functions on [0, 1]).
pub(crate) fn track_reach(cubic: bool, times: &[f32], values: &[Vec4], size: fn(Vec4) -> f64) -> f64 {
    if !cubic {
        return values.iter().map(|&v| size(v)).fold(0.0, f64::max);
    }
    let key = |k: usize| (size(values[3 * k]), size(values[3 * k + 1]), size(values[3 * k + 2]));
    let keys = values.len() / 3;
    let mut reach = (0..keys).map(|k| key(k).1).fold(0.0, f64::max);
    for k in 1..keys.min(times.len()) {
        let span = f64::from(times[k]) - f64::from(times[k - 1]);
        let (_, v0, out0) = key(k - 1);
        let (in1, v1, _) = key(k);
        reach = reach.max(v0.max(v1) + 4.0 / 27.0 * span.abs() * (out0 + in1));
    }
    reach
}

/// The extent of a translation track (its keys' lengths).
pub(crate) fn translation_reach(cubic: bool, times: &[f32], values: &[Vec4]) -> f64 {
    track_reach(cubic, times, values, length)
}

/// The extent of a scale track (its keys' largest components).
pub(crate) fn scale_reach(cubic: bool, times: &[f32], values: &[Vec4]) -> f64 {
    track_reach(cubic, times, values, largest)
}

/// The extent of one local pose.
#[must_use]
pub(crate) fn pose_extent(translation: Vec4, scale: Vec4) -> Extent {
    Extent {
        translation: length(translation),
        scale: largest(scale),
    }
}

/// The spectral norm bound (Frobenius norm) of `m`'s linear part and the length of its
/// translation.
pub(crate) fn matrix_reach(m: &Mat4) -> (f64, f64) {
    let m = m.as_dmat4();
    let linear = DMat3::from_mat4(m);
    let frobenius =
        (linear.x_axis.length_squared() + linear.y_axis.length_squared() + linear.z_axis.length_squared()).sqrt();
    (frobenius, m.w_axis.truncate().length())
}

/// What a joint reaches in model space: its linear part's norm and its translation's length,
/// and the same of its skinning matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointReach {
    /// Bound of the model matrix's linear-part norm.
    pub linear: f64,
    /// Bound of the model matrix's translation length.
    pub translation: f64,
    /// Bound of the skinning matrix's linear-part norm.
    pub skin_linear: f64,
    /// Bound of the skinning matrix's translation length.
    pub skin_translation: f64,
}

impl JointReach {
    /// The bound of a point `p` long moved by the skinning matrix.
    #[must_use]
    pub fn skin_point(&self, p: f64) -> f64 {
        self.skin_linear * p + self.skin_translation
    }
}

/// A skeleton as the bounds need it: parents (parents first), inverse binds and sockets
/// (joint, offset matrix).
pub(crate) struct Frame<'a> {
    pub parents: &'a [Option<u32>],
    pub inverse_binds: &'a [Mat4],
    pub sockets: Vec<(usize, Mat4)>,
}

/// The model and skinning reach of every joint of `skeleton` whose local poses stay within
/// `local`, with additive layers of extents `additive` on top; or the first joint that reaches
/// past [`MAX_REACH`] and what it reaches.
pub(crate) fn check(
    skeleton: &Frame<'_>,
    local: &[Extent],
    additive: &[&[Extent]],
) -> Result<Vec<JointReach>, (usize, String)> {
    let mut out: Vec<JointReach> = Vec::with_capacity(local.len());
    for (j, e) in local.iter().enumerate() {
        let mut t = e.translation;
        let mut s = e.scale;
        for layer in additive {
            let a = layer.get(j).copied().unwrap_or_default();
            t += a.translation;
            s *= a.scale.max(1.0);
        }
        let (pl, pt) = match skeleton.parents.get(j).copied().flatten() {
            Some(p) => out.get(p as usize).map_or((1.0, 0.0), |r| (r.linear, r.translation)),
            None => (1.0, 0.0),
        };
        let linear = pl * s;
        let translation = pt + pl * t;
        let (il, it) = skeleton.inverse_binds.get(j).map_or((0.0, 0.0), matrix_reach);
        let r = JointReach {
            linear,
            translation,
            skin_linear: linear * il,
            skin_translation: linear * it + translation,
        };
        let worst = [
            ("its model matrix's scale", r.linear),
            ("its model-space position", r.translation),
            ("its skinning matrix's scale", r.skin_linear),
            ("its skinning matrix's translation", r.skin_translation),
        ]
        .into_iter()
        .find(|(_, v)| !within(*v));
        if let Some((what, v)) = worst {
            return Err((
                j,
                format!("{what} may reach {v:.3e}; the library allows {MAX_REACH:.0e}"),
            ));
        }
        out.push(r);
    }
    for (k, (j, offset)) in skeleton.sockets.iter().enumerate() {
        let Some(r) = out.get(*j) else { continue };
        let (ol, ot) = matrix_reach(offset);
        let reach = r.linear * ot + r.translation;
        if !(within(r.linear * ol) && within(reach)) {
            return Err((
                *j,
                format!("socket {k} on it may reach {reach:.3e}; the library allows {MAX_REACH:.0e}"),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    fn frame<'a>(parents: &'a [Option<u32>], binds: &'a [Mat4]) -> Frame<'a> {
        Frame {
            parents,
            inverse_binds: binds,
            sockets: Vec::new(),
        }
    }

    #[test]
    fn a_chain_of_scales_compounds_and_is_refused_past_the_bound() {
        let parents: Vec<Option<u32>> = (0..15u32).map(|j| j.checked_sub(1)).collect();
        let binds = vec![Mat4::IDENTITY; 15];
        let local = vec![
            Extent {
                translation: 1.0,
                scale: 10.0
            };
            15
        ];
        // Joint 11's model scale is 1e12, the bound itself, but its skinning matrix (identity
        // inverse bind, Frobenius norm √3) reaches 1.7e12: the first past it.
        let (j, what) = check(&frame(&parents, &binds), &local, &[]).unwrap_err();
        assert_eq!(j, 11, "{what}");
        assert!(check(&frame(&parents[..11], &binds[..11]), &local[..11], &[]).is_ok());
    }

    #[test]
    fn a_scene_a_million_times_a_human_is_accepted() {
        // A root scaled by 1e6 over a 2-unit human of 20 joints, with its inverse binds.
        let parents: Vec<Option<u32>> = (0..20u32).map(|j| j.checked_sub(1)).collect();
        let mut model = Mat4::from_scale(Vec3::splat(1e6));
        let mut binds = vec![model.inverse()];
        for _ in 1..20 {
            model *= Mat4::from_rotation_translation(Quat::from_rotation_z(0.3), Vec3::new(0.0, 0.1, 0.0));
            binds.push(model.inverse());
        }
        let mut local = vec![
            Extent {
                translation: 0.1,
                scale: 1.0
            };
            20
        ];
        local[0].scale = 1e6;
        let reach = check(&frame(&parents, &binds), &local, &[]).unwrap();
        assert!(
            reach[19].translation < 3e6 && reach[19].skin_linear < 2.0,
            "{:?}",
            reach[19]
        );
        // Two additive layers of the same clip scale it by 1e12 more: refused.
        assert!(check(&frame(&parents, &binds), &local, &[&local, &local]).is_err());
    }

    #[test]
    fn a_huge_inverse_bind_is_refused() {
        let binds = [Mat4::from_cols_array(&[
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 3e38, 0.0, 0.0, 1.0,
        ])];
        let local = [Extent {
            translation: 0.0,
            scale: 1.0,
        }];
        let (j, what) = check(&frame(&[None], &binds), &local, &[]).unwrap_err();
        assert_eq!(j, 0);
        assert!(what.contains("skinning matrix's translation"), "{what}");
    }

    #[test]
    fn a_cubic_spline_counts_its_overshoot() {
        // Value 0 at both keys, tangents 3 over a span of 1: the curve reaches 4/27 · 6 ≈ 0.89.
        let v = |x: f32| Vec4::new(x, 0.0, 0.0, 0.0);
        let values = [v(3.0), v(0.0), v(3.0), v(3.0), v(0.0), v(3.0)];
        let reach = translation_reach(true, &[0.0, 1.0], &values);
        assert!((reach - 6.0 * 4.0 / 27.0).abs() < 1e-9, "{reach}");
        // The true curve h10·3 + h11·3 peaks below that bound.
        let peak = (0..=100)
            .map(|i| {
                let u = f64::from(i) / 100.0;
                (3.0 * (u * u * u - 2.0 * u * u + u) + 3.0 * (u * u * u - u * u)).abs()
            })
            .fold(0.0, f64::max);
        assert!(peak <= reach, "{peak} > {reach}");
        assert_eq!(translation_reach(false, &[0.0], &[v(-2.0)]), 2.0);
    }
}
