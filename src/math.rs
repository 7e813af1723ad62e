//! Transforms and rotation interpolation shared by the CPU mirror of every stage.
//!
//! Conventions are glam's: column vectors (`v' = M v`), Hamilton quaternions, `a * b` applies `b`
//! first. A local joint pose is SQT, `P = T(t) · R(q) · S(s)`, mapping the joint's space to its
//! parent's. Affine matrices on the GPU are 3×4, stored as three rows ([`Affine`]).

use glam::{Mat4, Quat, Vec3, Vec4};

/// Above this |dot| of two unit quaternions, [`quat_interp`] uses nlerp instead of slerp: the two
/// agree to within f32 precision there and slerp's `sin(θ)` division loses accuracy.
pub const NLERP_THRESHOLD: f32 = 0.9995;

/// A cubic rotation spline whose squared length is not above this (its tangents cancel its keys)
/// has no direction to normalize to: the sampler takes the two keys' own interpolation
/// ([`quat_interp`]) there instead, on the GPU and the CPU alike. WGSL
/// `CUBIC_ROTATION_MIN_LENGTH2`.
pub const CUBIC_ROTATION_MIN_LENGTH2: f32 = 1e-12;

/// A local joint transform: scale, then rotate, then translate (SQT).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Translation in the parent's space.
    pub translation: Vec3,
    /// Rotation, a unit quaternion.
    pub rotation: Quat,
    /// Non-uniform scale along the joint's own axes.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// A transform from its three parts.
    #[must_use]
    pub const fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Self {
            translation,
            rotation,
            scale,
        }
    }

    /// A pure translation.
    #[must_use]
    pub const fn from_translation(translation: Vec3) -> Self {
        Self::new(translation, Quat::IDENTITY, Vec3::ONE)
    }

    /// `parent_from_joint` as a 4×4 matrix.
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// True when every component is finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

/// An affine matrix as the GPU stores it: three rows of `[m_i0, m_i1, m_i2, t_i]`; the fourth row is
/// implicitly `[0, 0, 0, 1]`. Mirrors WGSL `struct Affine` in `shaders/shared/math.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Affine {
    /// First row.
    pub x: Vec4,
    /// Second row.
    pub y: Vec4,
    /// Third row.
    pub z: Vec4,
}
const _: () = assert!(std::mem::size_of::<Affine>() == 48);

impl Affine {
    /// The identity matrix.
    pub const IDENTITY: Self = Self {
        x: Vec4::X,
        y: Vec4::Y,
        z: Vec4::Z,
    };

    /// The 3×4 part of an affine 4×4 matrix (its last row is dropped).
    #[must_use]
    pub fn from_mat4(m: &Mat4) -> Self {
        Self {
            x: m.row(0),
            y: m.row(1),
            z: m.row(2),
        }
    }

    /// The 4×4 matrix with the implicit last row `[0, 0, 0, 1]`.
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_cols_array_2d(&[
            self.x.to_array(),
            self.y.to_array(),
            self.z.to_array(),
            [0.0, 0.0, 0.0, 1.0],
        ])
        .transpose()
    }

    /// `T(t) · R(q) · S(s)` — the same operations, in the same order, as WGSL `affine_from_sqt`.
    #[must_use]
    pub fn from_sqt(translation: Vec3, q: Quat, scale: Vec3) -> Self {
        let (x, y, z, w) = (q.x, q.y, q.z, q.w);
        let (x2, y2, z2) = (x + x, y + y, z + z);
        let (xx, yy, zz) = (x * x2, y * y2, z * z2);
        let (xy, xz, yz) = (x * y2, x * z2, y * z2);
        let (wx, wy, wz) = (w * x2, w * y2, w * z2);
        Self {
            x: Vec4::new(
                (1.0 - (yy + zz)) * scale.x,
                (xy - wz) * scale.y,
                (xz + wy) * scale.z,
                translation.x,
            ),
            y: Vec4::new(
                (xy + wz) * scale.x,
                (1.0 - (xx + zz)) * scale.y,
                (yz - wx) * scale.z,
                translation.y,
            ),
            z: Vec4::new(
                (xz - wy) * scale.x,
                (yz + wx) * scale.y,
                (1.0 - (xx + yy)) * scale.z,
                translation.z,
            ),
        }
    }

    /// `self * rhs` — the same operations, in the same order, as WGSL `affine_mul`.
    #[must_use]
    pub fn mul(&self, rhs: &Affine) -> Affine {
        let row = |a: Vec4| -> Vec4 { rhs.x * a.x + rhs.y * a.y + rhs.z * a.z + Vec4::new(0.0, 0.0, 0.0, a.w) };
        Affine {
            x: row(self.x),
            y: row(self.y),
            z: row(self.z),
        }
    }

    /// Transforms a point (w = 1).
    #[must_use]
    pub fn transform_point3(&self, p: Vec3) -> Vec3 {
        let p = p.extend(1.0);
        Vec3::new(self.x.dot(p), self.y.dot(p), self.z.dot(p))
    }

    /// Transforms a direction (w = 0).
    #[must_use]
    pub fn transform_vector3(&self, v: Vec3) -> Vec3 {
        let v = v.extend(0.0);
        Vec3::new(self.x.dot(v), self.y.dot(v), self.z.dot(v))
    }

    /// Largest absolute difference of any element.
    #[must_use]
    pub fn max_abs_diff(&self, other: &Affine) -> f32 {
        let d = [
            (self.x - other.x).abs(),
            (self.y - other.y).abs(),
            (self.z - other.z).abs(),
        ];
        d.iter().map(|v| v.max_element()).fold(0.0, f32::max)
    }
}

/// `v` rotated by the unit quaternion `q` (x, y, z, w): `v + 2w (u × v) + 2 u × (u × v)`. WGSL
/// `quat_rotate`.
#[must_use]
pub fn quat_rotate(q: Vec4, v: Vec3) -> Vec3 {
    let u = q.truncate().cross(v) * 2.0;
    v + u * q.w + q.truncate().cross(u)
}

/// Interpolates two unit quaternions along the shorter arc: slerp, or nlerp when they are nearly
/// equal (|dot| > [`NLERP_THRESHOLD`]). The same operations as WGSL `quat_interp`.
#[must_use]
pub fn quat_interp(a: Vec4, b: Vec4, t: f32) -> Vec4 {
    let mut d = a.dot(b);
    let mut b = b;
    if d < 0.0 {
        d = -d;
        b = -b;
    }
    if d > NLERP_THRESHOLD {
        return (a + (b - a) * t).normalize();
    }
    let theta = d.acos();
    let inv_sin = 1.0 / theta.sin();
    let wa = ((1.0 - t) * theta).sin() * inv_sin;
    let wb = (t * theta).sin() * inv_sin;
    (a * wa + b * wb).normalize()
}

/// [`fast_slerp`]'s `acos(d) / √(1 − d)` on [0, 1], coefficients of d⁰ to d⁶: least squares,
/// within 1e-7 rad of acos (its constant term is π/2, acos(0)).
pub const ACOS_P: [f32; 7] = [
    std::f32::consts::FRAC_PI_2,
    -0.214_590_04,
    0.088_821_92,
    -0.049_130_39,
    0.027_619_276,
    -0.011_862_981,
    0.002_560_671,
];

/// `sin(x) / x` for 0 ≤ x ≤ π/2, by its Taylor series to x¹⁰ (within 4e-8). WGSL `sin_over_x`.
#[must_use]
pub fn sin_over_x(x: f32) -> f32 {
    let y = x * x;
    1.0 + y * (-1.0 / 6.0 + y * (1.0 / 120.0 + y * (-1.0 / 5040.0 + y * (1.0 / 362_880.0 - y / 39_916_800.0))))
}

/// Slerp along the shorter arc without trigonometry: the angle `acos(d)`, `d = |a · b|`, as
/// `√(1 − d) P(d)` ([`ACOS_P`]), and the weights `sin(uθ) / sin θ = u S(uθ) / S(θ)`
/// ([`sin_over_x`]), the common `1 / S(θ)` left to the normalization. Within 3e-7 rad of
/// exact slerp for any two unit quaternions. A packed track's rotation between two frames; the
/// same operations as WGSL `fast_slerp`.
#[must_use]
pub fn fast_slerp(a: Vec4, b: Vec4, t: f32) -> Vec4 {
    let d = a.dot(b);
    let b = if d < 0.0 { -b } else { b };
    let x = d.abs().min(1.0);
    let p = ACOS_P.iter().rev().fold(0.0, |acc, &c| c + x * acc);
    let theta = (1.0 - x).sqrt() * p;
    (a * ((1.0 - t) * sin_over_x((1.0 - t) * theta)) + b * (t * sin_over_x(t * theta))).normalize()
}

/// Cubic Hermite basis at `u` ∈ [0, 1]: weights of (p0, m0, p1, m1), glTF's CUBICSPLINE.
#[must_use]
pub fn hermite_basis(u: f32) -> Vec4 {
    let u2 = u * u;
    let u3 = u2 * u;
    Vec4::new(
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    )
}

/// Largest absolute difference between two matrices' elements.
#[must_use]
pub fn mat4_max_abs_diff(a: &Mat4, b: &Mat4) -> f32 {
    a.to_cols_array()
        .iter()
        .zip(b.to_cols_array().iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_from_sqt_matches_glam() {
        let t = Transform::new(
            Vec3::new(1.0, -2.0, 3.0),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
            Vec3::new(1.0, 2.0, 0.5),
        );
        let a = Affine::from_sqt(t.translation, t.rotation, t.scale);
        assert!(mat4_max_abs_diff(&a.to_mat4(), &t.to_mat4()) < 1e-6);
    }

    #[test]
    fn affine_mul_matches_glam() {
        let a = Transform::new(Vec3::new(1.0, 0.0, 2.0), Quat::from_rotation_y(0.7), Vec3::splat(1.5));
        let b = Transform::new(
            Vec3::new(0.0, 3.0, 0.0),
            Quat::from_rotation_x(-0.4),
            Vec3::new(1.0, 2.0, 3.0),
        );
        let p = Affine::from_mat4(&a.to_mat4()).mul(&Affine::from_mat4(&b.to_mat4()));
        assert!(mat4_max_abs_diff(&p.to_mat4(), &(a.to_mat4() * b.to_mat4())) < 1e-5);
    }

    #[test]
    fn fast_slerp_stays_within_3e_7_rad_of_slerp_for_any_turn() {
        // Pairs from equal to opposite (d from 1 down to 0, either sign), at every fraction.
        let mut worst = 0.0f64;
        for i in 0..=400 {
            let angle = std::f64::consts::PI * f64::from(i) / 400.0;
            let axis = glam::DVec3::new(0.3, -0.8, 0.5).normalize();
            let a = glam::DQuat::from_axis_angle(glam::DVec3::new(0.6, 0.0, 0.8), 0.4 + f64::from(i) * 0.01);
            let mut b = a * glam::DQuat::from_axis_angle(axis, angle);
            if i % 2 == 1 {
                b = -b;
            }
            for k in 0..=20 {
                let t = f64::from(k) / 20.0;
                let exact = a.slerp(if a.dot(b) < 0.0 { -b } else { b }, t);
                let fast = fast_slerp(a.as_quat().into(), b.as_quat().into(), t as f32);
                let q = glam::DQuat::from_vec4(fast.as_dvec4());
                // The angle of the rotation between them (well conditioned near 0, unlike acos).
                let r = q * exact.conjugate();
                let e = 2.0 * r.xyz().length().atan2(r.w.abs());
                worst = worst.max(e);
            }
        }
        eprintln!("fast_slerp against slerp: worst {worst:e} rad");
        assert!(worst < 3e-7, "{worst:e}");
        // And a wrong interpolation fails the bound: plain nlerp strays by far more.
        let (a, b) = (Quat::IDENTITY, Quat::from_rotation_x(2.0));
        let nlerp = (Vec4::from(a) * 0.75 + Vec4::from(b) * 0.25).normalize();
        assert!(Quat::from_vec4(nlerp).angle_between(a.slerp(b, 0.25)) > 1e-2);
    }

    #[test]
    fn slerp_takes_the_shorter_arc_with_opposite_sign_keys() {
        let a = Quat::from_rotation_z(0.2);
        let b = Quat::from_rotation_z(1.0);
        let neg_b = Vec4::from(-b);
        let mid = Quat::from_vec4(quat_interp(Vec4::from(a), neg_b, 0.5));
        // Half-way along the shorter arc is a rotation of 0.6 rad about z (up to sign).
        assert!(mid.angle_between(Quat::from_rotation_z(0.6)) < 1e-5, "{mid:?}");
    }

    #[test]
    fn slerp_is_constant_speed() {
        let a = Quat::IDENTITY;
        let b = Quat::from_rotation_y(2.0);
        let q = Quat::from_vec4(quat_interp(Vec4::from(a), Vec4::from(b), 0.25));
        assert!(q.angle_between(Quat::from_rotation_y(0.5)) < 1e-5);
    }

    #[test]
    fn hermite_basis_interpolates_end_points() {
        assert_eq!(hermite_basis(0.0), Vec4::new(1.0, 0.0, 0.0, 0.0));
        assert_eq!(hermite_basis(1.0), Vec4::new(0.0, 0.0, 1.0, 0.0));
    }
}
