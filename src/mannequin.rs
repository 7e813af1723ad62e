//! The built-in procedural humanoid: a 53-joint skeleton, a smooth-skinned capsule mesh and six
//! looping clips (idle, walk, run, walk backward, strafe left and right), all generated in code.
//!
//! Conventions: Y up, the character faces +Z, its left is +X, metres. Every joint's rest rotation
//! is the identity (an A-pose with the arms 45° below horizontal), so local rotations read as
//! rotations about the model axes: pitch about X, yaw about Y, roll about Z.
//!
//! The gaits are solved per frame: each foot follows a planted-then-swinging path (heel strike,
//! foot flat, heel rise about the ball of the foot), the pelvis bobs, rotates and sways, and a
//! two-bone solver turns the foot paths into thigh and calf rotations. The clips are in place:
//! [`gaits`] gives the root velocity each one is authored for, so the feet do not slide. For the
//! walking gaits the left foot is planted (at mid-stance) at phase 0 and the right one at phase 0.5.

mod morph;
pub use morph::{BREATHE, PUFF, add_breathing, morph_targets};

use crate::clip::{Clip, ClipEvent, JointTrack, Track};
use crate::library::{AnimationLibrary, ClipId, SkeletonId};
use crate::math::Transform;
use crate::mesh::SkinnedMesh;
use crate::offline::LibraryBuilder;
use crate::offline::compress::ClipFormat;
use crate::skeleton::Skeleton;
use glam::{EulerRot, Mat3, Quat, Vec2, Vec3};
use std::f32::consts::{FRAC_1_SQRT_2, PI, TAU};

/// Names of the built-in clips, in this order.
pub const CLIP_NAMES: [&str; 6] = ["idle", "walk", "run", "walk_backward", "strafe_left", "strafe_right"];

/// Keys per second of every built-in clip.
pub const KEYS_PER_SECOND: f32 = 30.0;

/// The built-in humanoid: skeleton, skinned mesh, clips and the speed each clip is authored for.
#[derive(Clone, Debug)]
pub struct Mannequin {
    /// The skeleton (53 joints, parents first).
    pub skeleton: Skeleton,
    /// The skinned mesh, validated against [`Mannequin::skeleton`].
    pub mesh: SkinnedMesh,
    /// The clips, named and ordered as [`CLIP_NAMES`].
    pub clips: Vec<Clip>,
    /// The root velocity of each clip, in the same order.
    pub gaits: Vec<Gait>,
}

/// Root velocity a clip is authored for (character space, m/s: x = to the character's left (+X),
/// z = forward (+Z)); zero for idle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gait {
    /// The clip's name (one of [`CLIP_NAMES`]).
    pub clip: &'static str,
    /// Velocity `(x, z)` at which the feet do not slide.
    pub velocity: Vec2,
}

// ---------------------------------------------------------------------------------------------
// Skeleton
// ---------------------------------------------------------------------------------------------

const PELVIS_Y: f32 = 0.95;
const ANKLE_Y: f32 = 0.08;
/// Heel's back edge behind the ankle, along +Z.
const HEEL_BACK: f32 = 0.06;
/// The ball of the foot ahead of the ankle, along +Z.
const BALL_FWD: f32 = 0.13;
/// Toe tip ahead of the ankle.
const TOE_FWD: f32 = 0.215;
/// Height of the ball joint above the ground.
const BALL_Y: f32 = 0.02;

/// The five fingers' base names, thumb first.
const FINGERS: [&str; 5] = ["thumb", "index", "middle", "ring", "pinky"];

/// Per side: +1 for the left (+X), -1 for the right.
const SIDES: [(f32, &str); 2] = [(1.0, "l"), (-1.0, "r")];

/// Direction of the upper arm in the rest A-pose (45° below horizontal), for side `s`.
fn arm_dir(s: f32) -> Vec3 {
    Vec3::new(s * FRAC_1_SQRT_2, -FRAC_1_SQRT_2, 0.0)
}

/// The palm's normal in the rest pose (down and in), for side `s`.
fn palm_dir(s: f32) -> Vec3 {
    arm_dir(s).cross(Vec3::Z) * s
}

/// The thumb's direction in the rest pose.
fn thumb_dir(s: f32) -> Vec3 {
    (arm_dir(s) * 0.55 + Vec3::Z * 0.75 + palm_dir(s) * 0.35).normalize()
}

/// Finger `f` (index into [`FINGERS`]): base offset from the hand joint, direction and the lengths
/// of its three segments plus the tip.
fn finger_layout(s: f32, f: usize) -> (Vec3, Vec3, [f32; 3], f32) {
    let d = arm_dir(s);
    let p = palm_dir(s);
    let w = Vec3::Z;
    match f {
        0 => (
            d * 0.025 + w * 0.022 + p * 0.012,
            thumb_dir(s),
            [0.04, 0.032, 0.027],
            0.0105,
        ),
        1 => (d * 0.095 + w * 0.028, d, [0.045, 0.027, 0.022], 0.0085),
        2 => (d * 0.098 + w * 0.009, d, [0.05, 0.03, 0.024], 0.009),
        3 => (d * 0.094 - w * 0.01, d, [0.046, 0.028, 0.022], 0.0083),
        _ => (d * 0.086 - w * 0.028, d, [0.036, 0.022, 0.019], 0.0073),
    }
}

/// Every joint as (name, parent name, model-space rest position), parents first.
fn joint_layout() -> Vec<(String, Option<String>, Vec3)> {
    let mut j: Vec<(String, Option<String>, Vec3)> = Vec::with_capacity(53);
    let mut add = |name: String, parent: Option<&str>, pos: Vec3| {
        j.push((name, parent.map(str::to_owned), pos));
    };
    add("root".into(), None, Vec3::ZERO);
    add("pelvis".into(), Some("root"), Vec3::new(0.0, PELVIS_Y, 0.0));
    add("spine_01".into(), Some("pelvis"), Vec3::new(0.0, 1.05, 0.0));
    add("spine_02".into(), Some("spine_01"), Vec3::new(0.0, 1.18, 0.0));
    add("spine_03".into(), Some("spine_02"), Vec3::new(0.0, 1.32, 0.0));
    add("neck".into(), Some("spine_03"), Vec3::new(0.0, 1.49, 0.0));
    add("head".into(), Some("neck"), Vec3::new(0.0, 1.59, 0.0));
    for (s, side) in SIDES {
        let clav = Vec3::new(s * 0.03, 1.42, 0.0);
        let shoulder = Vec3::new(s * 0.18, 1.43, 0.0);
        let d = arm_dir(s);
        let elbow = shoulder + d * 0.29;
        let wrist = elbow + d * 0.26;
        add(format!("clavicle_{side}"), Some("spine_03"), clav);
        add(format!("upperarm_{side}"), Some(&format!("clavicle_{side}")), shoulder);
        add(format!("lowerarm_{side}"), Some(&format!("upperarm_{side}")), elbow);
        add(format!("hand_{side}"), Some(&format!("lowerarm_{side}")), wrist);
        for (f, finger) in FINGERS.iter().enumerate() {
            let (base, dir, seg, _) = finger_layout(s, f);
            let mut pos = wrist + base;
            let mut parent = format!("hand_{side}");
            for (k, len) in seg.iter().enumerate().take(3) {
                let name = format!("{finger}_0{}_{side}", k + 1);
                add(name.clone(), Some(&parent), pos);
                pos += dir * *len;
                parent = name;
            }
        }
    }
    for (s, side) in SIDES {
        let hip = Vec3::new(s * 0.10, 0.91, 0.0);
        add(format!("thigh_{side}"), Some("pelvis"), hip);
        add(
            format!("calf_{side}"),
            Some(&format!("thigh_{side}")),
            Vec3::new(s * 0.10, 0.48, 0.0),
        );
        add(
            format!("foot_{side}"),
            Some(&format!("calf_{side}")),
            Vec3::new(s * 0.10, ANKLE_Y, 0.0),
        );
        add(
            format!("ball_{side}"),
            Some(&format!("foot_{side}")),
            Vec3::new(s * 0.10, BALL_Y, BALL_FWD),
        );
    }
    j
}

/// The mannequin's skeleton: 53 joints, parents first, every rest rotation the identity, standing
/// in an A-pose with `root` on the ground at the origin.
#[must_use]
pub fn skeleton() -> Skeleton {
    let layout = joint_layout();
    let index = |name: &str| {
        layout
            .iter()
            .position(|(n, _, _)| n == name)
            .expect("parent is listed before its child")
    };
    let joints = layout
        .iter()
        .map(|(name, parent, pos)| {
            let (p, local) = match parent {
                Some(p) => {
                    let pi = index(p);
                    (Some(pi), *pos - layout[pi].2)
                }
                None => (None, *pos),
            };
            (name.clone(), p, Transform::from_translation(local))
        })
        .collect();
    Skeleton::from_rest_pose("mannequin", joints).expect("the built-in skeleton is valid")
}

/// Joint indices and rest geometry the mesh and clip generators share.
struct Rig {
    rest: Vec<Transform>,
    model: Vec<Vec3>,
    pelvis: usize,
    spine: [usize; 3],
    neck: usize,
    head: usize,
    sides: [SideRig; 2],
}

struct SideRig {
    s: f32,
    clavicle: usize,
    upperarm: usize,
    lowerarm: usize,
    hand: usize,
    fingers: [[usize; 3]; 5],
    thigh: usize,
    calf: usize,
    foot: usize,
    ball: usize,
}

impl Rig {
    fn new(skeleton: &Skeleton) -> Self {
        let j = |name: &str| {
            skeleton
                .joint_index(name)
                .unwrap_or_else(|| panic!("the mannequin skeleton has no joint '{name}'"))
        };
        let side = |s: f32, x: &str| SideRig {
            s,
            clavicle: j(&format!("clavicle_{x}")),
            upperarm: j(&format!("upperarm_{x}")),
            lowerarm: j(&format!("lowerarm_{x}")),
            hand: j(&format!("hand_{x}")),
            fingers: std::array::from_fn(|f| std::array::from_fn(|k| j(&format!("{}_0{}_{x}", FINGERS[f], k + 1)))),
            thigh: j(&format!("thigh_{x}")),
            calf: j(&format!("calf_{x}")),
            foot: j(&format!("foot_{x}")),
            ball: j(&format!("ball_{x}")),
        };
        Self {
            rest: skeleton.rest_pose().to_vec(),
            model: skeleton
                .rest_model_matrices()
                .iter()
                .map(|m| m.w_axis.truncate())
                .collect(),
            pelvis: j("pelvis"),
            spine: [j("spine_01"), j("spine_02"), j("spine_03")],
            neck: j("neck"),
            head: j("head"),
            sides: [side(1.0, "l"), side(-1.0, "r")],
        }
    }

    fn thigh_len(&self) -> f32 {
        let l = &self.sides[0];
        self.model[l.calf].distance(self.model[l.thigh])
    }

    fn calf_len(&self) -> f32 {
        let l = &self.sides[0];
        self.model[l.foot].distance(self.model[l.calf])
    }
}

// ---------------------------------------------------------------------------------------------
// Mesh
// ---------------------------------------------------------------------------------------------

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Weights along a chain of bones: bone `i` owns the interval between `bounds[i-1]` and
/// `bounds[i]` of the parameter `s`; each boundary blends over `±widths[i]`.
fn chain_weights(joints: &[usize], bounds: &[f32], widths: &[f32], s: f32) -> Vec<(usize, f32)> {
    let mut out = Vec::with_capacity(joints.len());
    let mut carry = 1.0;
    for ((&j, &b), &w) in joints.iter().zip(bounds).zip(widths) {
        let f = smoothstep(b - w, b + w, s);
        out.push((j, carry * (1.0 - f)));
        carry *= f;
    }
    out.push((*joints.last().expect("a chain has bones"), carry));
    out
}

/// The four largest influences, normalized.
fn pack_weights(list: &[(usize, f32)]) -> ([u16; 4], [f32; 4]) {
    let mut merged: Vec<(usize, f32)> = Vec::with_capacity(list.len());
    for &(j, w) in list {
        if w <= 1e-4 {
            continue;
        }
        match merged.iter_mut().find(|(m, _)| *m == j) {
            Some(e) => e.1 += w,
            None => merged.push((j, w)),
        }
    }
    merged.sort_by(|a, b| b.1.total_cmp(&a.1));
    merged.truncate(4);
    let sum: f32 = merged.iter().map(|e| e.1).sum();
    let mut joints = [0u16; 4];
    let mut weights = [0.0f32; 4];
    for (k, (j, w)) in merged.iter().enumerate() {
        joints[k] = u16::try_from(*j).expect("joint index fits in u16");
        weights[k] = w / sum;
    }
    (joints, weights)
}

/// One cross-section of a tube: centre, radii along the tube's two frame axes, superellipse
/// exponent (1 = ellipse, smaller = boxier).
#[derive(Clone, Copy)]
struct Ring {
    center: Vec3,
    rx: f32,
    ry: f32,
    power: f32,
}

impl Ring {
    fn round(center: Vec3, r: f32) -> Self {
        Self {
            center,
            rx: r,
            ry: r,
            power: 1.0,
        }
    }
}

/// How a tube's end is closed.
#[derive(Clone, Copy)]
enum Cap {
    /// A single vertex at the end ring's centre (a flat disc).
    Flat,
    /// A dome of `n` extra rings reaching `scale` × the mean radius past the end.
    Dome(usize, f32),
}

#[derive(Default)]
struct MeshBuilder {
    positions: Vec<Vec3>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    indices: Vec<u32>,
    /// Index ranges of the closed parts (for tests).
    parts: Vec<std::ops::Range<usize>>,
}

impl MeshBuilder {
    fn vertex(&mut self, p: Vec3, w: &[(usize, f32)]) -> u32 {
        let (j, w) = pack_weights(w);
        self.positions.push(p);
        self.joints.push(j);
        self.weights.push(w);
        u32::try_from(self.positions.len() - 1).expect("vertex count fits in u32")
    }

    /// A closed tube through `rings` (at least two), its frame built from `reference` (a direction
    /// not along the tube). `weight(ring_centre, vertex)` gives each vertex's influences.
    fn tube(
        &mut self,
        rings: &[Ring],
        reference: Vec3,
        sides: usize,
        caps: (Cap, Cap),
        weight: &dyn Fn(Vec3, Vec3) -> Vec<(usize, f32)>,
    ) {
        let n = rings.len();
        let tangent = |i: usize| {
            let a = rings[i.saturating_sub(1)].center;
            let b = rings[(i + 1).min(n - 1)].center;
            (b - a).normalize()
        };
        // Expand the caps into extra rings: (ring, tangent).
        let mut all: Vec<(Ring, Vec3)> = Vec::new();
        let dome = |cap: Cap, ring: Ring, t: Vec3, out: &mut Vec<(Ring, Vec3)>, start: bool| -> Vec3 {
            match cap {
                Cap::Flat => ring.center,
                Cap::Dome(m, scale) => {
                    let reach = 0.5 * (ring.rx + ring.ry) * scale;
                    let mut extra = Vec::with_capacity(m);
                    for k in 1..=m {
                        let phi = 0.5 * PI * k as f32 / (m + 1) as f32;
                        let dir = if start { -t } else { t };
                        extra.push((
                            Ring {
                                center: ring.center + dir * reach * phi.sin(),
                                rx: ring.rx * phi.cos(),
                                ry: ring.ry * phi.cos(),
                                power: ring.power,
                            },
                            t,
                        ));
                    }
                    if start {
                        extra.reverse();
                    }
                    out.extend(extra);
                    ring.center + if start { -t } else { t } * reach
                }
            }
        };
        let t0 = tangent(0);
        let start_pole = dome(caps.0, rings[0], t0, &mut all, true);
        for (i, r) in rings.iter().enumerate() {
            all.push((*r, tangent(i)));
        }
        let mut end_rings = Vec::new();
        let end_pole = dome(caps.1, rings[n - 1], tangent(n - 1), &mut end_rings, false);
        all.extend(end_rings);

        let first_index = self.indices.len();
        // The ring nearest each cap supplies the pole's weights (its centre on the axis).
        let start_w = weight(rings[0].center, start_pole);
        let end_w = weight(rings[n - 1].center, end_pole);
        let sp = self.vertex(start_pole, &start_w);
        let mut ring_starts = Vec::with_capacity(all.len());
        for (ring, t) in &all {
            let e1 = (reference - *t * reference.dot(*t)).normalize();
            let e2 = t.cross(e1);
            ring_starts.push(self.positions.len() as u32);
            for k in 0..sides {
                let th = TAU * k as f32 / sides as f32;
                let (sn, cs) = th.sin_cos();
                let x = cs.signum() * cs.abs().powf(ring.power);
                let y = sn.signum() * sn.abs().powf(ring.power);
                let p = ring.center + e1 * (ring.rx * x) + e2 * (ring.ry * y);
                // Weight by the point's projection onto the tube's axis.
                let w = weight(ring.center, p);
                self.vertex(p, &w);
            }
        }
        let ep = self.vertex(end_pole, &end_w);
        let sides32 = sides as u32;
        let first = ring_starts[0];
        for k in 0..sides32 {
            let k1 = (k + 1) % sides32;
            self.indices.extend([sp, first + k1, first + k]);
        }
        for w in ring_starts.windows(2) {
            let (a, b) = (w[0], w[1]);
            for k in 0..sides32 {
                let k1 = (k + 1) % sides32;
                self.indices.extend([a + k, a + k1, b + k1, a + k, b + k1, b + k]);
            }
        }
        let last = *ring_starts.last().expect("a tube has rings");
        for k in 0..sides32 {
            let k1 = (k + 1) % sides32;
            self.indices.extend([last + k, last + k1, ep]);
        }
        self.parts.push(first_index..self.indices.len());
    }
}

/// Builds the mesh and the index ranges of its closed parts.
fn build_mesh(skeleton: &Skeleton) -> (SkinnedMesh, Vec<std::ops::Range<usize>>) {
    let rig = Rig::new(skeleton);
    let m = &rig.model;
    let mut b = MeshBuilder::default();

    // Torso: elliptical rings up the spine (y, half width, half depth, z offset).
    let profile: [(f32, f32, f32, f32); 14] = [
        (0.84, 0.125, 0.09, 0.0),
        (0.88, 0.165, 0.11, -0.005),
        (0.93, 0.172, 0.115, -0.01),
        (0.99, 0.162, 0.11, -0.01),
        (1.05, 0.147, 0.10, 0.0),
        (1.11, 0.137, 0.095, 0.005),
        (1.17, 0.142, 0.10, 0.01),
        (1.23, 0.155, 0.11, 0.015),
        (1.29, 0.165, 0.115, 0.015),
        (1.34, 0.17, 0.115, 0.01),
        (1.39, 0.175, 0.105, 0.0),
        (1.43, 0.168, 0.095, -0.005),
        (1.47, 0.13, 0.08, -0.005),
        (1.50, 0.075, 0.06, 0.0),
    ];
    let mut torso = Vec::new();
    for (i, p) in profile.iter().enumerate() {
        let ring = |(y, rx, rz, z): (f32, f32, f32, f32)| Ring {
            center: Vec3::new(0.0, y, z),
            rx,
            ry: rz,
            power: 0.85,
        };
        torso.push(ring(*p));
        if let Some(q) = profile.get(i + 1) {
            let mid = (
                0.5 * (p.0 + q.0),
                0.5 * (p.1 + q.1),
                0.5 * (p.2 + q.2),
                0.5 * (p.3 + q.3),
            );
            torso.push(ring(mid));
        }
    }
    let spine_chain = [rig.pelvis, rig.spine[0], rig.spine[1], rig.spine[2], rig.neck];
    let spine_bounds = [m[rig.spine[0]].y, m[rig.spine[1]].y, m[rig.spine[2]].y, m[rig.neck].y];
    let [l, r] = &rig.sides;
    let torso_weight = |_c: Vec3, v: Vec3| {
        let mut w = chain_weights(&spine_chain, &spine_bounds, &[0.04, 0.05, 0.05, 0.03], v.y);
        let side = if v.x >= 0.0 { l } else { r };
        let clav = 0.6 * smoothstep(0.07, 0.16, v.x.abs()) * smoothstep(1.30, 1.42, v.y);
        let thigh = 0.5 * smoothstep(0.97, 0.87, v.y) * smoothstep(0.03, 0.13, v.x.abs());
        for e in &mut w {
            e.1 *= 1.0 - clav - thigh;
        }
        w.push((side.clavicle, clav));
        w.push((side.thigh, thigh));
        w
    };
    b.tube(
        &torso,
        Vec3::X,
        20,
        (Cap::Dome(2, 0.3), Cap::Dome(2, 0.4)),
        &torso_weight,
    );

    // Neck.
    let neck_chain = [rig.spine[2], rig.neck, rig.head];
    let neck_bounds = [m[rig.neck].y, m[rig.head].y];
    let neck_weight = |_c: Vec3, v: Vec3| chain_weights(&neck_chain, &neck_bounds, &[0.03, 0.03], v.y);
    let neck: Vec<Ring> = (0..6)
        .map(|k| {
            let y = 1.44 + 0.04 * k as f32;
            Ring {
                center: Vec3::new(0.0, y, -0.005),
                rx: 0.052,
                ry: 0.05,
                power: 1.0,
            }
        })
        .collect();
    b.tube(&neck, Vec3::X, 10, (Cap::Flat, Cap::Flat), &neck_weight);

    // Head: an ellipsoid as rings between two poles, plus a nose so the facing reads.
    let head_c = Vec3::new(0.0, 1.68, 0.012);
    let head_r = Vec3::new(0.088, 0.113, 0.1);
    let head: Vec<Ring> = (1..12)
        .map(|k| {
            let phi = -0.5 * PI + PI * k as f32 / 12.0;
            Ring {
                center: head_c + Vec3::Y * (head_r.y * phi.sin()),
                rx: head_r.x * phi.cos(),
                ry: head_r.z * phi.cos(),
                power: 1.0,
            }
        })
        .collect();
    let head_first = b.positions.len();
    b.tube(&head, Vec3::X, 16, (Cap::Flat, Cap::Flat), &neck_weight);
    // Flat caps put the poles on the end rings' centres; move them to the ellipsoid's poles.
    let head_last = b.positions.len() - 1;
    b.positions[head_first] = head_c - Vec3::Y * head_r.y;
    b.positions[head_last] = head_c + Vec3::Y * head_r.y;
    let nose = [
        Ring::round(Vec3::new(0.0, 1.675, 0.095), 0.012),
        Ring::round(Vec3::new(0.0, 1.655, 0.118), 0.013),
    ];
    b.tube(&nose, Vec3::X, 8, (Cap::Flat, Cap::Dome(2, 0.8)), &|_c, _v| {
        vec![(rig.head, 1.0)]
    });

    for side in &rig.sides {
        let s = side.s;
        let d = arm_dir(s);
        let p = palm_dir(s);
        // Arm: shoulder to wrist.
        let shoulder = m[side.upperarm];
        let arm_profile: [(f32, f32); 14] = [
            (0.0, 0.056),
            (0.05, 0.055),
            (0.12, 0.05),
            (0.19, 0.045),
            (0.24, 0.041),
            (0.27, 0.039),
            (0.29, 0.038),
            (0.31, 0.039),
            (0.33, 0.041),
            (0.38, 0.042),
            (0.44, 0.037),
            (0.49, 0.032),
            (0.53, 0.028),
            (0.56, 0.026),
        ];
        let arm: Vec<Ring> = arm_profile
            .iter()
            .map(|&(t, rad)| Ring::round(shoulder + d * t, rad))
            .collect();
        let arm_chain = [side.clavicle, side.upperarm, side.lowerarm, side.hand];
        let elbow_s = (m[side.lowerarm] - shoulder).dot(d);
        let wrist_s = (m[side.hand] - shoulder).dot(d);
        let arm_weight = |_c: Vec3, v: Vec3| {
            chain_weights(
                &arm_chain,
                &[0.0, elbow_s, wrist_s],
                &[0.05, 0.04, 0.02],
                (v - shoulder).dot(d),
            )
        };
        b.tube(&arm, Vec3::Z, 10, (Cap::Dome(3, 1.0), Cap::Dome(2, 0.6)), &arm_weight);

        // Palm: a flattened box along the hand.
        let wrist = m[side.hand];
        let palm: Vec<Ring> = [(-0.005, 0.03), (0.03, 0.04), (0.06, 0.043), (0.095, 0.042)]
            .iter()
            .map(|&(t, half_width)| Ring {
                center: wrist + d * t,
                rx: half_width,
                ry: 0.016,
                power: 0.6,
            })
            .collect();
        let palm_chain = [side.lowerarm, side.hand];
        let palm_weight = |_c: Vec3, v: Vec3| chain_weights(&palm_chain, &[0.0], &[0.02], (v - wrist).dot(d));
        b.tube(&palm, Vec3::Z, 12, (Cap::Dome(1, 0.3), Cap::Dome(2, 0.4)), &palm_weight);

        // Fingers: small tubes along their three joints.
        for (f, joints) in side.fingers.iter().enumerate() {
            let (_, dir, seg, rad) = finger_layout(s, f);
            let base = m[joints[0]];
            let b1 = seg[0];
            let b2 = seg[0] + seg[1];
            let tip = b2 + seg[2] - rad;
            let stations = [
                (-0.012, 1.05),
                (0.0, 1.0),
                (0.5 * b1, 0.97),
                (b1 - 0.004, 0.93),
                (b1 + 0.004, 0.93),
                (0.5 * (b1 + b2), 0.9),
                (b2 - 0.003, 0.87),
                (b2 + 0.003, 0.87),
                (tip, 0.82),
            ];
            let rings: Vec<Ring> = stations
                .iter()
                .map(|&(t, k)| Ring {
                    center: base + dir * t,
                    rx: rad * k,
                    ry: rad * k * 0.85,
                    power: 1.0,
                })
                .collect();
            let chain = [side.hand, joints[0], joints[1], joints[2]];
            let finger_weight =
                |_c: Vec3, v: Vec3| chain_weights(&chain, &[0.0, b1, b2], &[0.008, 0.006, 0.005], (v - base).dot(dir));
            b.tube(&rings, p, 6, (Cap::Flat, Cap::Dome(2, 0.9)), &finger_weight);
        }

        // Leg: hip to ankle.
        let hip = m[side.thigh];
        let knee_s = hip.y - m[side.calf].y;
        let ankle_s = hip.y - m[side.foot].y;
        let leg_profile: [(f32, f32, f32); 16] = [
            (-0.04, 0.08, 0.0),
            (0.0, 0.084, 0.0),
            (0.08, 0.082, 0.003),
            (0.18, 0.075, 0.004),
            (0.28, 0.065, 0.003),
            (0.35, 0.057, 0.002),
            (0.39, 0.053, 0.003),
            (0.43, 0.051, 0.004),
            (0.47, 0.052, 0.0),
            (0.52, 0.056, -0.008),
            (0.58, 0.058, -0.012),
            (0.65, 0.051, -0.008),
            (0.72, 0.043, -0.004),
            (0.77, 0.038, 0.0),
            (0.81, 0.036, 0.0),
            (0.84, 0.035, 0.0),
        ];
        let leg: Vec<Ring> = leg_profile
            .iter()
            .map(|&(t, rad, z)| Ring::round(hip - Vec3::Y * t + Vec3::Z * z, rad))
            .collect();
        let leg_chain = [rig.pelvis, side.thigh, side.calf, side.foot];
        let leg_weight =
            |_c: Vec3, v: Vec3| chain_weights(&leg_chain, &[0.0, knee_s, ankle_s], &[0.06, 0.05, 0.03], hip.y - v.y);
        b.tube(&leg, Vec3::Z, 12, (Cap::Dome(3, 1.0), Cap::Dome(2, 0.8)), &leg_weight);

        // Foot: a rounded box from heel to toe, flat on the ground.
        let ankle = m[side.foot];
        let foot_profile: [(f32, f32, f32); 10] = [
            (-HEEL_BACK, 0.034, 0.07),
            (-0.045, 0.04, 0.088),
            (-0.01, 0.043, 0.1),
            (0.04, 0.046, 0.088),
            (0.09, 0.048, 0.065),
            (0.12, 0.049, 0.05),
            (0.14, 0.048, 0.042),
            (0.17, 0.046, 0.034),
            (0.195, 0.042, 0.028),
            (TOE_FWD, 0.034, 0.022),
        ];
        let foot: Vec<Ring> = foot_profile
            .iter()
            .map(|&(z, half_width, h)| Ring {
                center: Vec3::new(ankle.x, 0.5 * h, ankle.z + z),
                rx: half_width,
                ry: 0.5 * h,
                power: 0.55,
            })
            .collect();
        let foot_chain = [side.foot, side.ball];
        let ball_z = m[side.ball].z;
        let foot_weight = |_c: Vec3, v: Vec3| {
            let mut w = chain_weights(&foot_chain, &[ball_z], &[0.025], v.z);
            let calf = 0.5 * smoothstep(0.06, 0.1, v.y) * smoothstep(0.06, 0.0, v.z - ankle.z);
            for e in &mut w {
                e.1 *= 1.0 - calf;
            }
            w.push((side.calf, calf));
            w
        };
        b.tube(&foot, Vec3::X, 16, (Cap::Flat, Cap::Flat), &foot_weight);
    }

    let uvs = b
        .positions
        .iter()
        .map(|p| Vec2::new(0.5 + p.x, 1.0 - p.y / 1.8))
        .collect();
    let mut mesh = SkinnedMesh {
        name: "mannequin".into(),
        positions: b.positions,
        normals: Vec::new(),
        uvs,
        joints: b.joints,
        weights: b.weights,
        indices: b.indices,
        morph_targets: crate::morph::MorphTargets::default(),
    };
    mesh.validate(skeleton.joint_count())
        .expect("the built-in mesh is valid");
    (mesh, b.parts)
}

/// The mannequin's skinned mesh for `skeleton` (which must be [`skeleton()`]), validated: capsule
/// limbs, an elliptical torso, a head with a nose, box feet and five-fingered hands, with smooth
/// weights (up to four influences) across every joint, normals computed from the triangles, and
/// two morph targets, [`BREATHE`] and [`PUFF`] ([`morph_targets`]).
#[must_use]
pub fn mesh(skeleton: &Skeleton) -> SkinnedMesh {
    let mut mesh = build_mesh(skeleton).0;
    mesh.morph_targets = morph_targets(&mesh, skeleton);
    mesh.validate(skeleton.joint_count())
        .expect("the built-in morph targets are valid");
    mesh
}

// ---------------------------------------------------------------------------------------------
// Clips
// ---------------------------------------------------------------------------------------------

/// Fraction of stance spent rolling down from the heel.
const HEEL_ROCKER: f32 = 0.15;
/// Fraction of stance after which the heel rises.
const HEEL_RISE: f32 = 0.55;

/// Everything that shapes one clip.
#[derive(Clone, Copy)]
struct GaitSpec {
    name: &'static str,
    frames: u32,
    /// Root velocity `(x, z)`.
    velocity: Vec2,
    /// Fraction of the cycle each foot is on the ground.
    duty: f32,
    /// Each foot's distance from the midline.
    foot_lateral: f32,
    /// Centre of the stance path ahead of the hip.
    stance_z: f32,
    /// Peak lift of the swinging ankle and where in the swing it peaks.
    step_height: f32,
    lift_peak: f32,
    /// Exponent delaying the swing foot's travel (a heel kick for the run).
    swing_ease: f32,
    /// Foot pitch at heel strike (toe up) and at toe off (heel up), radians.
    heel_strike: f32,
    toe_off: f32,
    /// The longest hip-to-ankle distance, as a fraction of the leg's length.
    reach: f32,
    /// Pelvis bob: > 0 highest at mid-stance (walk), < 0 lowest at mid-stance (run).
    bob: f32,
    sway: f32,
    pelvis_yaw: f32,
    pelvis_roll: f32,
    /// Forward lean of the whole torso.
    lean: f32,
    chest_yaw: f32,
    arm_swing: f32,
    arm_forward: f32,
    /// How far the arms hang below the A-pose.
    arm_down: f32,
    elbow: f32,
    elbow_swing: f32,
    finger_curl: f32,
    /// Breathing and idle motion amplitude.
    breath: f32,
}

const IDLE: GaitSpec = GaitSpec {
    name: "idle",
    frames: 90,
    velocity: Vec2::ZERO,
    duty: 1.0,
    foot_lateral: 0.115,
    stance_z: 0.0,
    step_height: 0.0,
    lift_peak: 0.5,
    swing_ease: 1.0,
    heel_strike: 0.0,
    toe_off: 0.0,
    reach: 0.997,
    bob: 0.004,
    sway: 0.018,
    pelvis_yaw: 0.0,
    pelvis_roll: 0.025,
    lean: 0.02,
    chest_yaw: 0.0,
    arm_swing: 0.03,
    arm_forward: 0.03,
    arm_down: 0.55,
    elbow: 0.22,
    elbow_swing: 0.04,
    finger_curl: 0.3,
    breath: 1.0,
};

const WALK: GaitSpec = GaitSpec {
    name: "walk",
    frames: 30,
    velocity: Vec2::new(0.0, 1.4),
    duty: 0.55,
    foot_lateral: 0.09,
    stance_z: -0.08,
    step_height: 0.07,
    lift_peak: 0.4,
    swing_ease: 1.0,
    heel_strike: 0.3,
    toe_off: 0.6,
    reach: 0.99,
    bob: 0.018,
    sway: 0.02,
    pelvis_yaw: 0.09,
    pelvis_roll: 0.05,
    lean: 0.04,
    chest_yaw: 0.12,
    arm_swing: 0.35,
    arm_forward: 0.02,
    arm_down: 0.55,
    elbow: 0.25,
    elbow_swing: 0.3,
    finger_curl: 0.35,
    breath: 0.0,
};

const RUN: GaitSpec = GaitSpec {
    name: "run",
    frames: 22,
    velocity: Vec2::new(0.0, 3.5),
    duty: 0.3,
    foot_lateral: 0.07,
    stance_z: -0.12,
    step_height: 0.2,
    lift_peak: 0.42,
    swing_ease: 1.5,
    heel_strike: 0.15,
    toe_off: 0.7,
    reach: 0.97,
    bob: -0.02,
    sway: 0.01,
    pelvis_yaw: 0.14,
    pelvis_roll: 0.06,
    lean: 0.2,
    chest_yaw: 0.2,
    arm_swing: 0.65,
    arm_forward: 0.15,
    arm_down: 0.6,
    elbow: 1.35,
    elbow_swing: 0.3,
    finger_curl: 0.9,
    breath: 0.0,
};

const WALK_BACKWARD: GaitSpec = GaitSpec {
    name: "walk_backward",
    frames: 32,
    velocity: Vec2::new(0.0, -1.0),
    duty: 0.6,
    foot_lateral: 0.095,
    stance_z: -0.03,
    step_height: 0.06,
    lift_peak: 0.5,
    swing_ease: 1.0,
    heel_strike: 0.2,
    toe_off: 0.45,
    reach: 0.99,
    bob: 0.012,
    sway: 0.02,
    pelvis_yaw: 0.07,
    pelvis_roll: 0.04,
    lean: -0.02,
    chest_yaw: 0.08,
    arm_swing: 0.25,
    arm_forward: 0.0,
    arm_down: 0.55,
    elbow: 0.3,
    elbow_swing: 0.2,
    finger_curl: 0.35,
    breath: 0.0,
};

const STRAFE_LEFT: GaitSpec = GaitSpec {
    name: "strafe_left",
    frames: 20,
    velocity: Vec2::new(1.2, 0.0),
    duty: 0.3,
    foot_lateral: 0.16,
    stance_z: 0.0,
    step_height: 0.08,
    lift_peak: 0.5,
    swing_ease: 1.0,
    heel_strike: 0.0,
    toe_off: 0.0,
    reach: 0.985,
    bob: 0.01,
    sway: 0.0,
    pelvis_yaw: 0.0,
    pelvis_roll: 0.06,
    lean: 0.06,
    chest_yaw: 0.0,
    arm_swing: 0.1,
    arm_forward: 0.1,
    arm_down: 0.5,
    elbow: 0.6,
    elbow_swing: 0.15,
    finger_curl: 0.5,
    breath: 0.0,
};

const STRAFE_RIGHT: GaitSpec = GaitSpec {
    name: "strafe_right",
    velocity: Vec2::new(-1.2, 0.0),
    ..STRAFE_LEFT
};

const SPECS: [GaitSpec; 6] = [IDLE, WALK, RUN, WALK_BACKWARD, STRAFE_LEFT, STRAFE_RIGHT];

impl GaitSpec {
    fn duration(&self) -> f32 {
        self.frames as f32 / KEYS_PER_SECOND
    }

    fn speed(&self) -> f32 {
        self.velocity.length()
    }

    /// +1 walking forwards, -1 backwards, 0 sideways.
    fn forward(&self) -> f32 {
        if self.speed() > 0.0 {
            self.velocity.y / self.speed()
        } else {
            0.0
        }
    }

    /// Distance a planted foot travels relative to the body.
    fn stance_length(&self) -> f32 {
        self.speed() * self.duty * self.duration()
    }

    /// A foot at stance fraction `s`: ankle position, pitch (toe up > 0), toe rotation.
    fn stance(&self, side: f32, s: f32) -> (Vec3, f32, f32) {
        let dir = self.velocity.normalize_or_zero();
        let anchor = Vec2::new(side * self.foot_lateral, self.stance_z) + dir * self.stance_length() * (0.5 - s);
        // Forward gaits roll heel to toe; backward ones the same played in reverse.
        let roll = self.forward().abs();
        let s_roll = if self.forward() < 0.0 { 1.0 - s } else { s };
        let pitch = if s_roll < HEEL_ROCKER {
            self.heel_strike * roll * (1.0 - smoothstep(0.0, HEEL_ROCKER, s_roll))
        } else if s_roll > HEEL_RISE {
            -self.toe_off * roll * smoothstep(HEEL_RISE, 1.0, s_roll)
        } else {
            0.0
        };
        let rot = Quat::from_rotation_x(-pitch);
        let ankle = if pitch > 0.0 {
            let pivot = Vec3::new(anchor.x, 0.0, anchor.y - HEEL_BACK);
            pivot + rot * Vec3::new(0.0, ANKLE_Y, HEEL_BACK)
        } else {
            // Heel rise pivots about the ball joint, so the toes stay flat and put.
            let pivot = Vec3::new(anchor.x, BALL_Y, anchor.y + BALL_FWD);
            pivot + rot * Vec3::new(0.0, ANKLE_Y - BALL_Y, -BALL_FWD)
        };
        (ankle, pitch, pitch.min(0.0))
    }

    /// A foot at its own phase `phi` ∈ [0, 1) (0 = touch-down): ankle, pitch, toe rotation.
    fn foot(&self, side: f32, phi: f32) -> (Vec3, f32, f32) {
        if phi < self.duty {
            return self.stance(side, phi / self.duty);
        }
        let s = (phi - self.duty) / (1.0 - self.duty);
        let (a0, p0, t0) = self.stance(side, 1.0);
        let (a1, p1, t1) = self.stance(side, 0.0);
        let e = smoothstep(0.0, 1.0, s.powf(self.swing_ease));
        let warp = s.powf(0.5f32.ln() / self.lift_peak.ln());
        let ankle = a0.lerp(a1, e) + Vec3::Y * (self.step_height * (PI * warp).sin());
        let pitch = p0 + (p1 - p0) * smoothstep(0.0, 1.0, s);
        let toe = t0 * (1.0 - smoothstep(0.0, 0.5, s)) + t1 * smoothstep(0.5, 1.0, s);
        (ankle, pitch, toe)
    }

    /// Each foot's own phase at clip phase `u`: the left foot is at mid-stance at `u = 0`.
    fn foot_phase(&self, side: f32, u: f32) -> f32 {
        let offset = if side > 0.0 { 0.0 } else { 0.5 };
        (u + offset + 0.5 * self.duty).fract()
    }

    /// Pelvis rotation and horizontal offset at phase `u` (its height is solved separately).
    fn pelvis(&self, u: f32) -> (Quat, Vec3) {
        let (s1, c1) = (TAU * u).sin_cos();
        let c2 = (2.0 * TAU * u).cos();
        let yaw = self.pelvis_yaw * self.forward() * s1;
        let pitch = 0.25 * self.lean + 0.01 * c2 * self.speed().min(1.0);
        let roll = self.pelvis_roll * c1;
        let rot = Quat::from_euler(EulerRot::YXZ, yaw, pitch, roll);
        (rot, Vec3::new(self.sway * c1, 0.0, 0.0))
    }

    fn bob_at(&self, u: f32) -> f32 {
        self.bob * (2.0 * TAU * u).cos()
    }

    /// The pelvis base height at which every leg reaches its ankle target over the whole cycle.
    fn pelvis_height(&self, rig: &Rig) -> f32 {
        let reach = self.reach * (rig.thigh_len() + rig.calf_len());
        let mut y0 = rig.model[rig.pelvis].y - 0.005;
        for k in 0..self.frames {
            let u = k as f32 / self.frames as f32;
            let (rot, offset) = self.pelvis(u);
            for side in &rig.sides {
                let (ankle, _, _) = self.foot(side.s, self.foot_phase(side.s, u));
                let hip = offset + rot * (rig.model[side.thigh] - rig.model[rig.pelvis]);
                let horiz = Vec2::new(hip.x - ankle.x, hip.z - ankle.z).length();
                let rise = (reach * reach - horiz * horiz).max(0.0).sqrt();
                y0 = y0.min(ankle.y - hip.y + rise - self.bob_at(u));
            }
        }
        y0
    }
}

/// Rotations (model space) of thigh and calf whose chain from `hip` ends at `target`, the knee
/// bending toward `pole`.
fn two_bone(hip: Vec3, target: Vec3, l1: f32, l2: f32, pole: Vec3) -> (Quat, Quat) {
    let to = target - hip;
    let dist = to.length().clamp((l1 - l2).abs() + 1e-4, (l1 + l2) * 0.9999);
    let dir = to.normalize();
    let cos_a = ((l1 * l1 + dist * dist - l2 * l2) / (2.0 * l1 * dist)).clamp(-1.0, 1.0);
    let sin_a = (1.0 - cos_a * cos_a).sqrt();
    let bend = (pole - dir * pole.dot(dir)).normalize();
    let knee = hip + dir * (l1 * cos_a) + bend * (l1 * sin_a);
    let end = hip + dir * dist;
    let y1 = (hip - knee).normalize();
    let z1 = (bend - y1 * bend.dot(y1)).normalize();
    let x = y1.cross(z1);
    let y2 = (knee - end).normalize();
    let z2 = x.cross(y2);
    (
        Quat::from_mat3(&Mat3::from_cols(x, y1, z1)).normalize(),
        Quat::from_mat3(&Mat3::from_cols(x, y2, z2)).normalize(),
    )
}

/// Every joint's local transform at phase `u` ∈ [0, 1).
fn pose(spec: &GaitSpec, rig: &Rig, pelvis_y0: f32, u: f32) -> Vec<Transform> {
    let mut local = rig.rest.clone();
    let (s1, c1) = (TAU * u).sin_cos();
    let s2 = (2.0 * TAU * u).sin();
    let fwd = spec.forward();

    // Pelvis.
    let (pelvis_rot, offset) = spec.pelvis(u);
    let pelvis_pos = offset + Vec3::Y * (pelvis_y0 + spec.bob_at(u));
    local[rig.pelvis].translation = pelvis_pos;
    local[rig.pelvis].rotation = pelvis_rot;

    // Spine: counter-rotate the chest, keep the head level and looking ahead.
    let b = spec.breath;
    let yaw = -(spec.pelvis_yaw + spec.chest_yaw) * fwd * s1;
    let roll = -0.8 * spec.pelvis_roll * c1;
    let lean = 0.75 * spec.lean;
    let shares = [0.3, 0.35, 0.35];
    for (k, &j) in rig.spine.iter().enumerate() {
        let breathe = if k == 2 { -0.015 * b * s2 } else { 0.0 };
        local[j].rotation = Quat::from_euler(
            EulerRot::YXZ,
            yaw * shares[k],
            lean * shares[k] + breathe,
            roll * shares[k],
        );
    }
    let look = 0.08 * b * (TAU * u + 0.7).sin();
    let head_yaw = 0.5 * spec.chest_yaw * fwd * s1;
    let head_pitch = -0.45 * (0.25 * spec.lean + lean);
    let head_roll = -0.1 * roll + 0.02 * b * c1;
    local[rig.neck].rotation = Quat::from_euler(EulerRot::YXZ, head_yaw + 0.4 * look, head_pitch, head_roll);
    local[rig.head].rotation = Quat::from_euler(
        EulerRot::YXZ,
        head_yaw + 0.6 * look,
        head_pitch + 0.01 * b * s2,
        head_roll,
    );

    // Legs.
    let (l1, l2) = (rig.thigh_len(), rig.calf_len());
    for side in &rig.sides {
        let s = side.s;
        let (ankle, pitch, toe) = spec.foot(s, spec.foot_phase(s, u));
        let hip = pelvis_pos + pelvis_rot * (rig.model[side.thigh] - rig.model[rig.pelvis]);
        let pole = Vec3::new(0.08 * s, 0.0, 1.0).normalize();
        let (thigh, calf) = two_bone(hip, ankle, l1, l2, pole);
        let foot = Quat::from_rotation_x(-pitch);
        local[side.thigh].rotation = (pelvis_rot.inverse() * thigh).normalize();
        local[side.calf].rotation = (thigh.inverse() * calf).normalize();
        local[side.foot].rotation = (calf.inverse() * foot).normalize();
        local[side.ball].rotation = Quat::from_rotation_x(toe);
    }

    // Arms: hang from the A-pose, swing opposite the legs, bend the elbows more going forward.
    let arm_sign = if fwd < -0.5 { -1.0 } else { 1.0 };
    for side in &rig.sides {
        let s = side.s;
        let d = arm_dir(s);
        let p = palm_dir(s);
        let swing = s * arm_sign * s1;
        let forward = spec.arm_forward + spec.arm_swing * swing + 0.02 * b * s1;
        let breathe = 0.02 * b * s2;
        local[side.clavicle].rotation =
            Quat::from_euler(EulerRot::YXZ, -0.12 * s * spec.arm_swing * swing, 0.0, s * breathe);
        local[side.upperarm].rotation =
            Quat::from_euler(EulerRot::YXZ, 0.0, -forward, -s * (spec.arm_down - 0.03 * b * c1));
        let flex = spec.elbow + spec.elbow_swing * 0.5 * (1.0 + swing);
        local[side.lowerarm].rotation = Quat::from_axis_angle(d.cross(Vec3::Z).normalize(), flex);
        local[side.hand].rotation = Quat::from_axis_angle(d.cross(p).normalize(), 0.15 + 0.05 * swing);
        for (f, joints) in side.fingers.iter().enumerate() {
            let (_, dir, _, _) = finger_layout(s, f);
            let (axis, curl) = if f == 0 {
                (dir.cross(p).normalize(), 0.4 * spec.finger_curl)
            } else {
                (d.cross(p).normalize(), spec.finger_curl * (0.8 + 0.05 * f as f32))
            };
            for (k, &j) in joints.iter().enumerate() {
                let share = [0.9, 1.0, 0.7][k];
                local[j].rotation = Quat::from_axis_angle(axis, curl * share);
            }
        }
    }
    local
}

/// A linear track with one key per frame at [`KEYS_PER_SECOND`]; the last key (a copy of the
/// first) lands exactly on `duration`.
fn keyed<T: Copy>(values: Vec<T>, duration: f32) -> Track<T> {
    let n = values.len() - 1;
    Track::linear(values.into_iter().enumerate().map(|(k, v)| {
        let t = if k == n { duration } else { k as f32 / KEYS_PER_SECOND };
        (t, v)
    }))
}

/// Builds one looping clip from its spec: keys at [`KEYS_PER_SECOND`], the last equal to the first.
fn build_clip(spec: &GaitSpec, rig: &Rig, names: &[String]) -> Clip {
    let y0 = spec.pelvis_height(rig);
    let n = spec.frames as usize;
    let poses: Vec<Vec<Transform>> = (0..n)
        .map(|k| pose(spec, rig, y0, k as f32 / spec.frames as f32))
        .collect();
    let duration = spec.duration();
    let mut tracks = Vec::new();
    for (j, name) in names.iter().enumerate() {
        if j == 0 {
            continue; // the root stays at the origin
        }
        let mut rotations: Vec<Quat> = Vec::with_capacity(n + 1);
        for pose in &poses {
            let mut q = pose[j].rotation.normalize();
            if let Some(prev) = rotations.last() {
                if prev.dot(q) < 0.0 {
                    q = -q;
                }
            }
            rotations.push(q);
        }
        rotations.push(rotations[0]);
        let translation = (j == rig.pelvis).then(|| {
            let mut t: Vec<Vec3> = poses.iter().map(|p| p[j].translation).collect();
            t.push(t[0]);
            keyed(t, duration)
        });
        tracks.push(JointTrack {
            joint: name.clone(),
            translation,
            rotation: Some(keyed(rotations, duration)),
            scale: None,
        });
    }
    Clip {
        morph_weights: Vec::new(),
        events: spec.foot_down_events(),
        curves: Vec::new(),
        name: spec.name.into(),
        duration,
        looping: true,
        tracks,
    }
}

/// The event fired when the left foot lands ([`clips`]).
pub const FOOT_DOWN_L: &str = "foot_down_l";
/// The event fired when the right foot lands ([`clips`]).
pub const FOOT_DOWN_R: &str = "foot_down_r";
/// The built-in foot-down events' weight threshold: in a blend, only a clip of at least half the
/// weight steps, so that a walk blended with a run does not land each foot twice.
pub const FOOT_DOWN_THRESHOLD: f32 = 0.5;

impl GaitSpec {
    /// Each foot's touch-down (its own phase 0), as [`FOOT_DOWN_L`] and [`FOOT_DOWN_R`]
    /// events; none for a gait whose feet never leave the ground.
    fn foot_down_events(&self) -> Vec<ClipEvent> {
        if self.duty >= 1.0 {
            return Vec::new();
        }
        SIDES
            .iter()
            .map(|&(side, _)| {
                // foot_phase(side, u) = 0.
                let offset = if side > 0.0 { 0.0 } else { 0.5 };
                let u = (2.0 - offset - 0.5 * self.duty).fract();
                ClipEvent {
                    name: if side > 0.0 { FOOT_DOWN_L } else { FOOT_DOWN_R }.to_owned(),
                    time: u * self.duration(),
                    threshold: FOOT_DOWN_THRESHOLD,
                }
            })
            .collect()
    }
}

/// The six built-in clips for `skeleton` (which must be [`skeleton()`]), named and ordered as
/// [`CLIP_NAMES`]: all looping, linearly interpolated, keyed 30 times a second, in place (the
/// root never moves), the last key of every track equal to its first. Each gait but the idle
/// has a [`FOOT_DOWN_L`] and a [`FOOT_DOWN_R`] event where that foot lands.
#[must_use]
pub fn clips(skeleton: &Skeleton) -> Vec<Clip> {
    let rig = Rig::new(skeleton);
    SPECS
        .iter()
        .map(|spec| build_clip(spec, &rig, skeleton.joint_names()))
        .collect()
}

/// The root velocity each built-in clip is authored for, ordered as [`CLIP_NAMES`].
#[must_use]
pub fn gaits() -> Vec<Gait> {
    SPECS
        .iter()
        .map(|s| Gait {
            clip: s.name,
            velocity: s.velocity,
        })
        .collect()
}

/// The whole mannequin: skeleton, mesh, clips and gaits.
#[must_use]
pub fn mannequin() -> Mannequin {
    let skeleton = skeleton();
    let mesh = mesh(&skeleton);
    let clips = clips(&skeleton);
    Mannequin {
        skeleton,
        mesh,
        clips,
        gaits: gaits(),
    }
}

/// A library holding the mannequin's skeleton and clips (for demos, tests and benches), the clips
/// compressed with the default settings ([`ClipFormat::Compressed`]).
///
/// The library also holds the [`LOCOMOTION`] blend tree ([`locomotion_tree`]).
#[must_use]
pub fn library() -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    library_of(skeleton())
}

/// As [`library`], its clips in `format`.
#[must_use]
pub fn library_in(format: ClipFormat) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    build_library(skeleton(), false, format)
}

/// The right hand's grip socket of [`skeleton_with_grip`]: a held prop's +Y points forward (+Z)
/// out of the fist in the rest pose.
pub const GRIP: &str = "grip_r";

/// The left sole's socket ([`add_soles`]): under the left foot, at the ground, +Z along the foot.
pub const SOLE_L: &str = "sole_l";
/// The right sole's socket ([`add_soles`]).
pub const SOLE_R: &str = "sole_r";

/// Adds the [`SOLE_L`] and [`SOLE_R`] sockets to a mannequin skeleton: under each foot's ankle,
/// at the ground in the rest pose, a little forward (the middle of the sole), +Z along the foot.
/// Returns their socket indices.
///
/// Errors: the skeleton lacks the feet or has no room for two more sockets.
pub fn add_soles(skeleton: &mut Skeleton) -> crate::Result<[usize; 2]> {
    let sole = Transform::from_translation(Vec3::new(0.0, -ANKLE_Y, 0.04));
    let l = skeleton.add_socket(SOLE_L, "foot_l", sole)?;
    let r = skeleton.add_socket(SOLE_R, "foot_r", sole)?;
    Ok([l, r])
}

/// The mannequin's left leg IK chain ([`add_ik`]).
pub const LEG_L: &str = "leg_l";
/// The mannequin's right leg IK chain ([`add_ik`]).
pub const LEG_R: &str = "leg_r";
/// The mannequin's look-at IK chain ([`add_ik`]).
pub const LOOK: &str = "look";

/// Adds the mannequin's IK chains: [`LEG_L`] and [`LEG_R`] (thigh, calf, foot; the knee bends
/// about its −X, which takes the foot backward, the knee's pole forward, softened from 97 % of the leg's length, lowering
/// `pelvis` for ground goals) and [`LOOK`] (head, neck, upper spine aiming the eyes' +Z, up +Y,
/// half of what remains per joint). Returns their chain indices.
///
/// Errors: the skeleton lacks these joints or has no room for three more chains.
pub fn add_ik(skeleton: &mut Skeleton) -> crate::Result<[usize; 3]> {
    use crate::ik::{AimIk, IkChain, IkKind, TwoBoneIk};
    let joint = |s: &Skeleton, name: &str| {
        s.joint_index(name).ok_or_else(|| crate::Error::SkeletonShape {
            skeleton: s.name().to_owned(),
            what: format!("the mannequin's IK needs a joint '{name}'"),
        })
    };
    let pelvis = joint(skeleton, "pelvis")?;
    let mut leg = |side: &str, name: &str| -> crate::Result<usize> {
        let kind = IkKind::TwoBone(TwoBoneIk {
            start: joint(skeleton, &format!("thigh_{side}"))?,
            mid: joint(skeleton, &format!("calf_{side}"))?,
            end: joint(skeleton, &format!("foot_{side}"))?,
            mid_axis: -Vec3::X,
            pole: Vec3::Z,
            twist: 0.0,
            soften: 0.97,
            pelvis: Some(pelvis),
        });
        skeleton.add_ik_chain(IkChain {
            name: name.into(),
            kind,
        })
    };
    let (l, r) = (leg("l", LEG_L)?, leg("r", LEG_R)?);
    let joints = vec![
        joint(skeleton, "head")?,
        joint(skeleton, "neck")?,
        joint(skeleton, "spine_03")?,
    ];
    let look = skeleton.add_ik_chain(IkChain {
        name: LOOK.into(),
        kind: IkKind::Aim(AimIk {
            joints,
            forward: Vec3::Z,
            offset: Vec3::new(0.0, 0.08, 0.09),
            up: Vec3::Y,
            pole: Vec3::Y,
            twist: 0.0,
            joint_weight: 0.5,
        }),
    })?;
    Ok([l, r, look])
}

/// The mannequin's skeleton with the [`GRIP`] socket (socket 0) in the right hand.
#[must_use]
pub fn skeleton_with_grip() -> Skeleton {
    let mut skeleton = skeleton();
    // Every rest rotation is the identity, so the hand's frame is the model's at rest: the grip
    // sits in the fist (along the arm, towards the palm), turned so that +Y points forward.
    let side = -1.0;
    let grip = Transform::new(
        arm_dir(side) * 0.075 + palm_dir(side) * 0.025,
        Quat::from_rotation_x(PI / 2.0),
        Vec3::ONE,
    );
    skeleton
        .add_socket(GRIP, "hand_r", grip)
        .expect("the built-in grip is valid");
    skeleton
}

/// A sword in a grip socket's frame (handle at the origin, blade along +Y, 1 m long): the prop
/// the crowd demo gives some of its members.
#[must_use]
pub fn sword() -> SkinnedMesh {
    // Boxes: handle, guard, blade, pommel (centre, half extents).
    let parts = [
        (Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.016, 0.075, 0.016)),
        (Vec3::new(0.0, 0.09, 0.0), Vec3::new(0.085, 0.014, 0.022)),
        (Vec3::new(0.0, 0.52, 0.0), Vec3::new(0.028, 0.42, 0.007)),
        (Vec3::new(0.0, -0.085, 0.0), Vec3::new(0.026, 0.014, 0.026)),
    ];
    let mut mesh = SkinnedMesh {
        name: "sword".into(),
        ..Default::default()
    };
    for (centre, half) in parts {
        // Six faces, four corners each, flat normals.
        for axis in 0..3 {
            for sign in [-1.0f32, 1.0] {
                let mut n = Vec3::ZERO;
                n[axis] = sign;
                // (u, v, n) right-handed: the corners below run counter-clockwise seen from outside.
                let mut u = Vec3::ZERO;
                u[(axis + 1) % 3] = 1.0;
                let v = n.cross(u);
                let base = mesh.positions.len() as u32;
                for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                    mesh.positions.push(centre + (n + u * a + v * b) * half);
                    mesh.normals.push(n);
                    mesh.joints.push([0; 4]);
                    mesh.weights.push([1.0, 0.0, 0.0, 0.0]);
                }
                mesh.indices
                    .extend([base, base + 1, base + 2, base, base + 2, base + 3]);
            }
        }
    }
    mesh
}

/// A library of `skeleton` (the mannequin's, or one with sockets added: [`skeleton_with_grip`])
/// with the mannequin's clips, [`LOCOMOTION`] tree and layer assets, compressed.
#[must_use]
pub fn library_of(skeleton: Skeleton) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    build_library(skeleton, false, ClipFormat::Compressed)
}

/// As [`library_in`], the skeleton with the mannequin's IK chains ([`add_ik`]): the library and
/// the chains' indices, left leg, right leg, look-at.
///
/// Errors: as [`add_ik`].
pub fn library_with_ik_in(
    format: ClipFormat,
) -> crate::Result<(AnimationLibrary, SkeletonId, Vec<ClipId>, [usize; 3])> {
    let mut skeleton = skeleton();
    let chains = add_ik(&mut skeleton)?;
    let (lib, id, clips) = build_library(skeleton, false, format);
    Ok((lib, id, clips, chains))
}

/// As [`library_of`], the gaits with root motion: each authored moving its root joint at the
/// gait's velocity ([`clips_with_root_motion`]), the motion extracted
/// ([`LibraryBuilder::add_clip_with_root_motion`], planar, from `root`), so that they animate in
/// place and move a character with root motion on at the speed its feet step.
#[must_use]
pub fn library_with_root_motion(skeleton: Skeleton) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    build_library(skeleton, true, ClipFormat::Compressed)
}

/// As [`library_with_root_motion`], its clips in `format`.
#[must_use]
pub fn library_with_root_motion_in(
    skeleton: Skeleton,
    format: ClipFormat,
) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    build_library(skeleton, true, format)
}

/// The six gaits of [`clips`] moving: the root joint translated at each gait's velocity (keys at
/// 0 and the end: a constant velocity), as a motion-captured take would.
#[must_use]
pub fn clips_with_root_motion(skeleton: &Skeleton) -> Vec<Clip> {
    let mut clips = clips(skeleton);
    for (clip, spec) in clips.iter_mut().zip(SPECS.iter()) {
        let end = Vec3::new(spec.velocity.x, 0.0, spec.velocity.y) * clip.duration;
        clip.tracks.push(JointTrack {
            joint: "root".into(),
            translation: Some(Track::linear([(0.0, Vec3::ZERO), (clip.duration, end)])),
            ..Default::default()
        });
    }
    clips
}

fn build_library(
    skeleton: Skeleton,
    root_motion: bool,
    format: ClipFormat,
) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    build_library_with(skeleton, root_motion, false, format)
}

/// As [`library_in`], and the gaits breathe: each drives the mesh's [`BREATHE`] target
/// ([`add_breathing`]).
#[must_use]
pub fn library_breathing_in(format: ClipFormat) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    build_library_with(skeleton(), false, true, format)
}

/// The crowd's library: as [`library_with_root_motion_in`], and the gaits breathe: each drives
/// the mesh's [`BREATHE`] target ([`add_breathing`]), blended on the GPU with the gaits.
#[must_use]
pub fn crowd_library_in(skeleton: Skeleton, format: ClipFormat) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    build_library_with(skeleton, true, true, format)
}

/// As [`crowd_library_in`], not yet built: for a library that adds its own assets (a state
/// machine, clips of its own) to the crowd's.
#[must_use]
pub fn crowd_library_builder_in(skeleton: Skeleton, format: ClipFormat) -> (LibraryBuilder, SkeletonId, Vec<ClipId>) {
    library_builder_with(skeleton, true, true, format)
}

fn build_library_with(
    skeleton: Skeleton,
    root_motion: bool,
    breathing: bool,
    format: ClipFormat,
) -> (AnimationLibrary, SkeletonId, Vec<ClipId>) {
    let (builder, id, ids) = library_builder_with(skeleton, root_motion, breathing, format);
    (builder.build(), id, ids)
}

/// The builder of [`library_in`], not built yet: for a library that adds its own assets (the
/// bench's state machine) to the mannequin's.
#[cfg(feature = "tools")]
pub(crate) fn builder_in(format: ClipFormat) -> (LibraryBuilder, SkeletonId, Vec<ClipId>) {
    library_builder_with(skeleton(), false, false, format)
}

fn library_builder_with(
    skeleton: Skeleton,
    root_motion: bool,
    breathing: bool,
    format: ClipFormat,
) -> (LibraryBuilder, SkeletonId, Vec<ClipId>) {
    let mut clips = if root_motion {
        clips_with_root_motion(&skeleton)
    } else {
        clips(&skeleton)
    };
    if breathing {
        add_breathing(&mut clips);
    }
    let mut builder = LibraryBuilder::new();
    builder.set_compression(format.settings());
    let id = builder.add_skeleton(skeleton);
    let motion = crate::offline::root_motion::RootMotion {
        joint: Some("root".into()),
        ..Default::default()
    };
    let ids: Vec<ClipId> = clips
        .iter()
        .map(|c| {
            if root_motion {
                builder.add_clip_with_root_motion(id, c, &motion)
            } else {
                builder.add_clip(id, c)
            }
            .expect("the built-in clips are valid")
        })
        .collect();
    builder
        .add_blend_tree(&locomotion_tree(&ids))
        .expect("the built-in locomotion tree is valid");
    add_layer_assets(&mut builder, id);
    (builder, id, ids)
}

/// Names of the built-in layer assets in [`library`] (clips, a blend tree and masks).
pub mod layer_assets {
    /// Looping wave of the right arm (an absolute pose clip, for a masked override layer).
    pub const WAVE: &str = "wave";
    /// A hit flinch as a difference clip against the rest pose (additive, play once).
    pub const FLINCH: &str = "flinch";
    /// The right arm held forward, pointing (an absolute pose, for a masked override layer).
    pub const AIM_POSE: &str = "aim_pose";
    /// Aim offset: a Delaunay 2D blend space of difference poses (centre, left, right, up, down,
    /// relative to the centre) driven by parameter 2 (yaw, −1 left … 1 right, ±35°) and
    /// parameter 3 (pitch, −1 down … 1 up, ±25°); apply it as a mesh-space additive layer.
    pub const AIM_OFFSET: &str = "aim_offset";
    /// The aim poses left, centre and right as frames 0, 1 and 2 s of one difference clip: a
    /// clip's time axis as a parameter (sample it at 1 + yaw).
    pub const AIM_SWEEP: &str = "aim_sweep";
    /// Mask: the right arm from the clavicle down, ramping over two levels.
    pub const RIGHT_ARM: &str = "right_arm";
    /// Mask: the upper body from `spine_02` up, ramping over two levels.
    pub const UPPER_BODY: &str = "upper_body";
}

/// A one-key clip holding `pose` (rotations per joint name) over one second.
fn pose_clip(name: &str, rotations: &[(&str, Quat)]) -> Clip {
    Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: name.into(),
        duration: 1.0,
        looping: true,
        tracks: rotations
            .iter()
            .map(|(joint, q)| JointTrack {
                joint: (*joint).to_string(),
                rotation: Some(Track::constant(*q)),
                ..Default::default()
            })
            .collect(),
    }
}

/// The aim pose turned by `yaw` (about y, positive to the character's left) and `pitch`
/// (positive up) at the upper spine.
fn aim_pose(name: &str, yaw: f32, pitch: f32) -> Clip {
    let forward = Quat::from_rotation_arc(Vec3::new(-1.0, -1.0, 0.0).normalize(), Vec3::Z);
    pose_clip(
        name,
        &[
            ("spine_03", Quat::from_rotation_y(yaw) * Quat::from_rotation_x(-pitch)),
            ("upperarm_r", forward),
            ("clavicle_r", Quat::from_rotation_y(-0.15)),
        ],
    )
}

/// Waving, flinching and aiming for layers, with masks: see [`layer_assets`].
fn add_layer_assets(b: &mut LibraryBuilder, id: SkeletonId) {
    use crate::blend::{Blend2DKind, BlendNode, BlendTree};
    use crate::offline::layers::{Reference, difference_clip, mask_from_joint};
    let skeleton = b.skeleton(id).expect("the skeleton was just added").clone();
    // Wave: the arm raised to the side, the forearm sweeping twice a cycle.
    let n = 36;
    let key = |k: usize, f: &dyn Fn(f32) -> Quat| -> (f32, Quat) {
        let u = (k % n) as f32 / n as f32;
        (k as f32 / 30.0, f(u))
    };
    let raise = |_: f32| Quat::from_rotation_z(-1.95) * Quat::from_rotation_y(0.3);
    let sweep = |u: f32| Quat::from_rotation_z(-0.5 + 0.45 * (std::f32::consts::TAU * 2.0 * u).sin());
    let wave = Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: layer_assets::WAVE.into(),
        duration: n as f32 / 30.0,
        looping: true,
        tracks: vec![
            JointTrack {
                joint: "upperarm_r".into(),
                rotation: Some(Track::linear((0..=n).map(|k| key(k, &raise)))),
                ..Default::default()
            },
            JointTrack {
                joint: "lowerarm_r".into(),
                rotation: Some(Track::linear((0..=n).map(|k| key(k, &sweep)))),
                ..Default::default()
            },
        ],
    };
    b.add_clip(id, &wave).expect("the wave clip is valid");
    // Flinch: the torso snaps back, shoulders up, head down, and recovers.
    let flinch_pose = |a: f32| -> Vec<(&str, Quat)> {
        vec![
            ("spine_01", Quat::from_rotation_x(-0.10 * a)),
            ("spine_02", Quat::from_rotation_x(-0.12 * a)),
            (
                "spine_03",
                Quat::from_rotation_x(-0.12 * a) * Quat::from_rotation_y(0.15 * a),
            ),
            ("neck", Quat::from_rotation_x(0.25 * a)),
            ("clavicle_l", Quat::from_rotation_z(0.25 * a)),
            ("clavicle_r", Quat::from_rotation_z(-0.25 * a)),
            ("upperarm_l", Quat::from_rotation_z(0.35 * a)),
            ("upperarm_r", Quat::from_rotation_z(-0.35 * a)),
        ]
    };
    let amounts = [(0.0f32, 0.0f32), (0.08, 1.0), (0.3, 0.45), (0.6, 0.0)];
    let joints: Vec<&str> = flinch_pose(0.0).iter().map(|(j, _)| *j).collect();
    let flinch_absolute = Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: "flinch_absolute".into(),
        duration: 0.6,
        looping: false,
        tracks: joints
            .iter()
            .enumerate()
            .map(|(k, joint)| JointTrack {
                joint: (*joint).to_string(),
                rotation: Some(Track::linear(amounts.iter().map(|&(t, a)| (t, flinch_pose(a)[k].1)))),
                ..Default::default()
            })
            .collect(),
    };
    let rest = pose_clip("rest", &[]);
    let flinch = difference_clip(
        &skeleton,
        layer_assets::FLINCH,
        &flinch_absolute,
        Reference::Pose { clip: &rest, time: 0.0 },
    )
    .expect("the flinch difference is valid");
    b.add_clip(id, &flinch).expect("the flinch clip is valid");
    // Aim: a pose, and difference poses around it.
    let centre = aim_pose(layer_assets::AIM_POSE, 0.0, 0.0);
    b.add_clip(id, &centre).expect("the aim pose is valid");
    let (yaw, pitch) = (35f32.to_radians(), 25f32.to_radians());
    let offsets = [
        ("aim_centre", 0.0, 0.0),
        ("aim_left", -yaw, 0.0),
        ("aim_right", yaw, 0.0),
        ("aim_up", 0.0, pitch),
        ("aim_down", 0.0, -pitch),
    ];
    let mut aim_ids = Vec::new();
    for (name, y, p) in offsets {
        // Yaw to the right is a negative rotation about y (the character faces +z, left is +x).
        let d = difference_clip(
            &skeleton,
            name,
            &aim_pose(name, -y, p),
            Reference::Pose {
                clip: &centre,
                time: 0.0,
            },
        )
        .expect("aim differences are valid");
        aim_ids.push(b.add_clip(id, &d).expect("aim clips are valid"));
    }
    let positions = [
        Vec2::ZERO,
        Vec2::new(-1.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(0.0, 1.0),
        Vec2::new(0.0, -1.0),
    ];
    let mut nodes = vec![BlendNode::Blend2D {
        kind: Blend2DKind::Delaunay,
        parameters: [2, 3],
        children: positions.iter().enumerate().map(|(k, p)| (*p, k + 1)).collect(),
    }];
    nodes.extend(aim_ids.iter().map(|&c| BlendNode::Clip(c)));
    b.add_blend_tree(&BlendTree {
        name: layer_assets::AIM_OFFSET.into(),
        nodes,
        root: 0,
    })
    .expect("the aim offset is valid");
    // The same poses as the frames of one clip: left at 0 s, centre at 1 s, right at 2 s.
    let sweep_source = Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: "aim_sweep_absolute".into(),
        duration: 2.0,
        looping: false,
        tracks: vec![
            JointTrack {
                joint: "spine_03".into(),
                rotation: Some(Track::linear([
                    (0.0, Quat::from_rotation_y(yaw)),
                    (1.0, Quat::IDENTITY),
                    (2.0, Quat::from_rotation_y(-yaw)),
                ])),
                ..Default::default()
            },
            JointTrack {
                joint: "upperarm_r".into(),
                rotation: Some(Track::constant(Quat::from_rotation_arc(
                    Vec3::new(-1.0, -1.0, 0.0).normalize(),
                    Vec3::Z,
                ))),
                ..Default::default()
            },
            JointTrack {
                joint: "clavicle_r".into(),
                rotation: Some(Track::constant(Quat::from_rotation_y(-0.15))),
                ..Default::default()
            },
        ],
    };
    let sweep = difference_clip(
        &skeleton,
        layer_assets::AIM_SWEEP,
        &sweep_source,
        Reference::Pose {
            clip: &centre,
            time: 0.0,
        },
    )
    .expect("the aim sweep is valid");
    b.add_clip(id, &sweep).expect("the aim sweep clip is valid");
    let arm = mask_from_joint(&skeleton, "clavicle_r", 2).expect("the mannequin has a right clavicle");
    b.add_mask(id, layer_assets::RIGHT_ARM, &arm)
        .expect("the arm mask is valid");
    let upper = mask_from_joint(&skeleton, "spine_02", 2).expect("the mannequin has a spine");
    b.add_mask(id, layer_assets::UPPER_BODY, &upper)
        .expect("the upper-body mask is valid");
}

/// Name of the built-in locomotion blend tree in [`library`].
pub const LOCOMOTION: &str = "locomotion";

/// Targeted locomotion (Game Engine Architecture §11.6.2.3): a freeform directional 2D blend
/// space over the six clips at the velocities their gaits are authored for ([`gaits`]), driven by
/// the character-space velocity — parameter 0 is x (to the character's left, m/s), parameter 1
/// is z (forward, m/s). Idle sits at the centre, walk and run share the forward direction, so the
/// character can move in any direction while facing another. `clips` are the library's clip ids
/// in [`CLIP_NAMES`] order.
#[must_use]
pub fn locomotion_tree(clips: &[ClipId]) -> crate::blend::BlendTree {
    use crate::blend::{Blend2DKind, BlendNode, BlendTree};
    let gaits = gaits();
    let mut nodes = vec![BlendNode::Blend2D {
        kind: Blend2DKind::FreeformDirectional,
        parameters: [0, 1],
        children: gaits.iter().enumerate().map(|(k, g)| (g.velocity, k + 1)).collect(),
    }];
    nodes.extend(gaits.iter().map(|g| {
        let k = CLIP_NAMES.iter().position(|n| *n == g.clip).unwrap_or(0);
        BlendNode::Clip(clips[k])
    }));
    BlendTree {
        name: LOCOMOTION.into(),
        nodes,
        root: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::Interpolation;
    use glam::Mat4;

    /// Local transforms of every joint of `clip` at time `t`, from the crate's f64 reference.
    fn local_pose(skel: &Skeleton, clip: &Clip, t: f32) -> Vec<Transform> {
        crate::reference::sample(skel, clip, f64::from(t))
            .iter()
            .map(|p| Transform::new(p.translation.as_vec3(), p.rotation.as_quat(), p.scale.as_vec3()))
            .collect()
    }

    /// Model-space matrices (model = parent_model * local), from the crate's f64 reference.
    fn fk(skel: &Skeleton, local: &[Transform]) -> Vec<Mat4> {
        let local: Vec<crate::reference::TransformF64> = local
            .iter()
            .map(|l| crate::reference::TransformF64 {
                translation: l.translation.as_dvec3(),
                rotation: l.rotation.as_dquat(),
                scale: l.scale.as_dvec3(),
            })
            .collect();
        crate::reference::local_to_model(skel, &local)
            .iter()
            .map(|m| m.as_mat4())
            .collect()
    }

    fn joint_pos(skel: &Skeleton, model: &[Mat4], name: &str) -> Vec3 {
        model[skel.joint_index(name).unwrap()].w_axis.truncate()
    }

    fn clip<'a>(clips: &'a [Clip], name: &str) -> &'a Clip {
        clips.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn skeleton_has_the_named_joints_in_parent_first_order() {
        let s = skeleton();
        assert!((50..=70).contains(&s.joint_count()), "{}", s.joint_count());
        let mut required = vec!["root", "pelvis", "spine_01", "spine_02", "spine_03", "neck", "head"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        for side in ["l", "r"] {
            for j in [
                "clavicle", "upperarm", "lowerarm", "hand", "thigh", "calf", "foot", "ball",
            ] {
                required.push(format!("{j}_{side}"));
            }
            for f in FINGERS {
                for k in 1..=3 {
                    required.push(format!("{f}_0{k}_{side}"));
                }
            }
        }
        for name in &required {
            assert!(s.joint_index(name).is_some(), "missing joint {name}");
        }
        // Nothing was reordered: the skeleton's order is the order given.
        assert!(s.source_index().iter().enumerate().all(|(i, &j)| i == j));
        for (i, p) in s.parents().iter().enumerate() {
            assert!(p.is_none_or(|p| (p as usize) < i));
        }
        // Root at the origin, pelvis about 0.95 m up, every rest joint above the ground.
        let m = s.rest_model_matrices();
        assert_eq!(joint_pos(&s, &m, "root"), Vec3::ZERO);
        assert!((joint_pos(&s, &m, "pelvis").y - 0.95).abs() < 0.05);
        assert!(m.iter().all(|m| m.w_axis.y >= 0.0));
        // Left is +X.
        assert!(joint_pos(&s, &m, "hand_l").x > 0.3 && joint_pos(&s, &m, "hand_r").x < -0.3);
    }

    #[test]
    fn mesh_is_valid_smoothly_weighted_and_human_sized() {
        let s = skeleton();
        let (mut mesh, parts) = build_mesh(&s);
        let n = mesh.positions.len();
        assert!((2000..=6000).contains(&n), "{n} vertices");
        mesh.validate(s.joint_count()).unwrap();
        assert_eq!(mesh.normals.len(), n);
        for (j, w) in mesh.joints.iter().zip(&mesh.weights) {
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{w:?}");
            assert!(w.iter().all(|&w| w >= 0.0));
            assert!(j.iter().all(|&j| (j as usize) < s.joint_count()));
        }
        // Smooth blends around elbows and knees.
        let m = s.rest_model_matrices();
        for joint in ["lowerarm_l", "lowerarm_r", "calf_l", "calf_r"] {
            let c = joint_pos(&s, &m, joint);
            let blended = (0..n)
                .filter(|&v| mesh.positions[v].distance(c) < 0.08)
                .filter(|&v| mesh.weights[v].iter().filter(|&&w| w > 0.0).count() >= 2)
                .count();
            assert!(blended >= 10, "{joint}: {blended} blended vertices");
        }
        let (lo, hi) = mesh.bounds();
        let height = hi.y - lo.y;
        assert!((1.7..=1.9).contains(&height), "height {height}");
        assert!(lo.y.abs() < 0.005, "lowest point {}", lo.y);
        // Every closed part encloses positive volume: its triangles face outward.
        for r in parts {
            let vol: f32 = mesh.indices[r.clone()]
                .chunks_exact(3)
                .map(|t| {
                    let [a, b, c] = [0, 1, 2].map(|k| mesh.positions[t[k] as usize]);
                    a.dot(b.cross(c)) / 6.0
                })
                .sum();
            assert!(vol > 0.0, "part {r:?} has volume {vol}");
        }
        // Normals point away from the body's axis on the torso's widest ring.
        let torso = (0..n)
            .filter(|&v| (mesh.positions[v].y - 1.29).abs() < 0.01)
            .filter(|&v| mesh.positions[v].x.abs() < 0.05 && mesh.positions[v].z > 0.05)
            .collect::<Vec<_>>();
        assert!(!torso.is_empty());
        assert!(torso.iter().all(|&v| mesh.normals[v].z > 0.5));
    }

    #[test]
    fn clips_are_accepted_looping_and_seamless() {
        let s = skeleton();
        let clips = clips(&s);
        assert_eq!(clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), CLIP_NAMES);
        let mut b = LibraryBuilder::new();
        let id = b.add_skeleton(s.clone());
        for c in &clips {
            b.add_clip(id, c).unwrap();
            assert!(c.looping);
            assert_eq!(c.last_key_time(), c.duration);
            assert!(c.tracks.iter().all(|t| t.joint != "root"));
            for t in &c.tracks {
                if let Some(r) = &t.rotation {
                    assert_eq!(r.interpolation, Interpolation::Linear);
                    assert_eq!(r.values.first(), r.values.last(), "{} {}", c.name, t.joint);
                    assert_eq!(r.times.first(), Some(&0.0));
                    assert_eq!(r.times.last(), Some(&c.duration));
                    assert!(r.values.iter().all(|q| (q.length() - 1.0).abs() < 1e-5));
                    // 30 keys a second.
                    for w in r.times.windows(2) {
                        assert!((w[1] - w[0] - 1.0 / 30.0).abs() < 1e-5);
                    }
                }
                if let Some(x) = &t.translation {
                    assert_eq!(x.values.first(), x.values.last());
                }
            }
        }
        let (lib, _, ids) = library();
        assert_eq!(ids.len(), 6);
        assert_eq!(
            lib.clip_names()[..6],
            CLIP_NAMES,
            "the gaits come first; layer assets follow"
        );
        let g = gaits();
        assert_eq!(g.iter().map(|g| g.clip).collect::<Vec<_>>(), CLIP_NAMES);
        assert_eq!(g[0].velocity, Vec2::ZERO);
        assert!(g[1].velocity.y > 1.0 && g[2].velocity.y > 3.0 && g[3].velocity.y < 0.0);
        assert!(g[4].velocity.x > 0.0 && g[5].velocity.x < 0.0);
    }

    #[test]
    fn left_foot_is_planted_at_phase_zero_and_right_at_half() {
        let s = skeleton();
        let clips = clips(&s);
        for name in &CLIP_NAMES[1..] {
            let c = clip(&clips, name);
            let at = |phase: f32| {
                let m = fk(&s, &local_pose(&s, c, phase * c.duration));
                (joint_pos(&s, &m, "foot_l"), joint_pos(&s, &m, "foot_r"))
            };
            let (l, r) = at(0.0);
            assert!(l.y < r.y - 0.02, "{name} phase 0: left {l} right {r}");
            assert!(l.y < 0.1, "{name} phase 0: left foot {l} is off the ground");
            let (l, r) = at(0.5);
            assert!(r.y < l.y - 0.02, "{name} phase 0.5: left {l} right {r}");
            assert!(r.y < 0.1, "{name} phase 0.5: right foot {r} is off the ground");
        }
    }

    /// Each walking gait's foot-down events mark its feet's landings: the lowest point of the
    /// foot (heel or ball) reaches the ground (within 1 cm) at the event and stays there for the
    /// next tenth of a cycle, while a tenth of a cycle before it that foot was in the air (more
    /// than 2 cm up).
    #[test]
    fn foot_down_events_are_at_touch_down() {
        let s = skeleton();
        let clips = clips(&s);
        assert!(clip(&clips, "idle").events.is_empty(), "idle never lifts a foot");
        for g in gaits().iter().skip(1) {
            let c = clip(&clips, g.clip);
            assert_eq!(c.events.len(), 2, "{}", g.clip);
            for e in &c.events {
                assert_eq!(e.threshold, FOOT_DOWN_THRESHOLD);
                let x = if e.name == FOOT_DOWN_L { "l" } else { "r" };
                // The height of the foot's lowest point, heel or ball, at clip time t.
                let lowest = |t: f32| {
                    let m = fk(&s, &local_pose(&s, c, t.rem_euclid(c.duration)));
                    let foot = m[s.joint_index(&format!("foot_{x}")).unwrap()];
                    let heel = foot.transform_point3(-Vec3::new(0.0, ANKLE_Y, HEEL_BACK));
                    let ball = joint_pos(&s, &m, &format!("ball_{x}")) - Vec3::Y * BALL_Y;
                    heel.y.min(ball.y)
                };
                let tenth = 0.1 * c.duration;
                for k in 0..=4 {
                    let h = lowest(e.time + tenth * k as f32 / 4.0);
                    assert!(h.abs() < 0.01, "{} {}: {h} m up after landing", g.clip, e.name);
                }
                let h = lowest(e.time - tenth);
                assert!(h > 0.02, "{} {}: only {h} m up before landing", g.clip, e.name);
            }
        }
    }

    #[test]
    fn planted_feet_do_not_slide_at_the_gait_speed() {
        let s = skeleton();
        let clips = clips(&s);
        for g in gaits().iter().skip(1) {
            let c = clip(&clips, g.clip);
            let world = |t: f32| {
                let m = fk(&s, &local_pose(&s, c, t));
                let root = Vec3::new(g.velocity.x, 0.0, g.velocity.y) * t;
                joint_pos(&s, &m, "ball_l") + root
            };
            // From mid-stance of the left foot on, its ball stays put in the world.
            let k = (c.duration * 30.0 * 0.12).round();
            let (a, b) = (world(0.0), world(k / 30.0));
            let slide = Vec2::new(a.x - b.x, a.z - b.z).length();
            assert!(slide < 0.003, "{}: foot slides {slide} m", g.clip);
        }
    }

    #[test]
    fn legs_swing_hands_move_and_nothing_goes_through_the_ground() {
        let s = skeleton();
        let (mesh, _) = build_mesh(&s);
        let inv = s.inverse_binds();
        let clips = clips(&s);
        for c in &clips {
            let frames = (c.duration * 30.0).round() as usize;
            let mut pitch = (f32::MAX, f32::MIN);
            let mut hand = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
            let mut lowest = f32::MAX;
            let thigh = s.joint_index("thigh_l").unwrap();
            for k in 0..frames {
                let local = local_pose(&s, c, k as f32 / 30.0);
                let (x, _, _) = local[thigh].rotation.to_euler(EulerRot::XYZ);
                pitch = (pitch.0.min(x), pitch.1.max(x));
                let m = fk(&s, &local);
                let h = joint_pos(&s, &m, "hand_l");
                hand = (hand.0.min(h), hand.1.max(h));
                for mm in &m {
                    assert!(mm.w_axis.y >= -1e-4, "{}: a joint below ground", c.name);
                }
                let palette: Vec<Mat4> = m.iter().zip(inv).map(|(m, i)| *m * *i).collect();
                for v in 0..mesh.positions.len() {
                    let p = (0..4)
                        .map(|i| {
                            let w = mesh.weights[v][i];
                            palette[mesh.joints[v][i] as usize].transform_point3(mesh.positions[v]) * w
                        })
                        .sum::<Vec3>();
                    lowest = lowest.min(p.y);
                }
            }
            assert!(lowest > -0.012, "{}: mesh reaches {lowest}", c.name);
            if c.name == "walk" || c.name == "run" {
                assert!(pitch.0 < -0.1 && pitch.1 > 0.1, "{}: thigh pitch {pitch:?}", c.name);
                let travel = (hand.1 - hand.0).length();
                assert!(travel > 0.15, "{}: hand moves {travel} m", c.name);
            }
        }
    }

    #[test]
    fn mannequin_bundles_everything() {
        let m = mannequin();
        assert_eq!(m.clips.len(), 6);
        assert_eq!(m.gaits.len(), 6);
        assert_eq!(m.mesh.joints.len(), m.mesh.positions.len());
        assert!(m.mesh.indices.len().is_multiple_of(3));
    }
}
