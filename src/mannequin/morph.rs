//! The mannequin's morph targets — its chest breathing and its cheeks puffed — and the weight
//! tracks that make its clips breathe (the crowd's library plays them).

use super::{SPECS, smoothstep};
use crate::clip::{Clip, Interpolation, Track};
use crate::mesh::SkinnedMesh;
use crate::morph::{MorphDelta, MorphTarget, MorphTargets};
use crate::skeleton::Skeleton;
use glam::Vec3;

/// Target 0: the chest swells and rises, as with a breath in.
pub const BREATHE: &str = "breathe";
/// Target 1: the cheeks puffed out, an expression each character holds at its own weight.
pub const PUFF: &str = "puff";

/// The mannequin mesh's morph targets, [`BREATHE`] and [`PUFF`], for `mesh` (the mannequin's,
/// with its normals) skinned to `skeleton` (the mannequin's). Each moves only the vertices of
/// its region: the chest's (skinned mostly to the upper spine) and the lower face's.
#[must_use]
pub fn morph_targets(mesh: &SkinnedMesh, skeleton: &Skeleton) -> MorphTargets {
    let joint = |name: &str| skeleton.joint_names().iter().position(|n| n == name);
    let chest = [joint("spine_02"), joint("spine_03")];
    let head = joint("head");
    // The joint with the largest weight of each vertex.
    let dominant = |v: usize| {
        let (k, _) = mesh.weights[v]
            .iter()
            .enumerate()
            .fold((0, f32::MIN), |best, (k, &w)| if w > best.1 { (k, w) } else { best });
        Some(usize::from(mesh.joints[v][k]))
    };
    let mut breathe = Vec::new();
    let mut puff = Vec::new();
    for (v, &p) in mesh.positions.iter().enumerate() {
        let d = dominant(v);
        if chest.contains(&d) {
            // Out along the horizontal normal, more in front, and a little up, fading towards
            // the belly and the shoulders.
            let n = mesh.normals.get(v).copied().unwrap_or(Vec3::Z);
            let Some(out) = Vec3::new(n.x, 0.0, n.z).try_normalize() else {
                continue;
            };
            let fade = smoothstep(1.12, 1.26, p.y) * (1.0 - smoothstep(1.36, 1.46, p.y));
            let amount = 0.03 * (0.5 + 0.5 * out.z.max(0.0)) * fade;
            if amount > 1e-5 {
                breathe.push(MorphDelta {
                    vertex: v as u32,
                    position: out * amount + Vec3::Y * 0.3 * amount,
                    ..MorphDelta::default()
                });
            }
        } else if d == head {
            // The cheeks: out from the head's axis, most at a band below its centre, in front.
            let centre = Vec3::new(0.0, 1.68, 0.012);
            let r = p - centre;
            let band = 1.0 - ((r.y + 0.045) / 0.045).powi(2);
            let front = smoothstep(-0.04, 0.03, r.z);
            let Some(out) = Vec3::new(r.x, 0.0, r.z).try_normalize() else {
                continue;
            };
            let amount = 0.03 * band.max(0.0) * front;
            if amount > 1e-5 {
                puff.push(MorphDelta {
                    vertex: v as u32,
                    position: out * amount,
                    ..MorphDelta::default()
                });
            }
        }
    }
    MorphTargets {
        mesh: mesh.name.clone(),
        targets: vec![with_normals(mesh, BREATHE, &breathe), with_normals(mesh, PUFF, &puff)],
        default_weights: Vec::new(),
    }
}

/// A target of the position displacements `moved`, with the normal displacements they make:
/// the normals of the mesh moved all the way, less the mesh's (so a vertex next to a moved one
/// may have a normal displacement alone).
fn with_normals(mesh: &SkinnedMesh, name: &str, moved: &[MorphDelta]) -> MorphTarget {
    let mut positions = mesh.positions.clone();
    let mut position_delta = vec![Vec3::ZERO; positions.len()];
    for d in moved {
        positions[d.vertex as usize] += d.position;
        position_delta[d.vertex as usize] = d.position;
    }
    let normals = crate::mesh::compute_normals(&positions, &mesh.indices);
    let normal_delta: Vec<Vec3> = normals
        .iter()
        .zip(&mesh.normals)
        .map(|(n, m)| if (*n - *m).length() > 1e-4 { *n - *m } else { Vec3::ZERO })
        .collect();
    MorphTarget::from_dense(name, &position_delta, &normal_delta, &[])
}

/// Gives each of the mannequin's gaits in `clips` (named as [`super::CLIP_NAMES`]) a
/// [`BREATHE`] weight track: whole breaths over the clip, so that it loops without a seam,
/// faster the faster the gait (about one every three seconds standing, two a second running).
pub fn add_breathing(clips: &mut [Clip]) {
    for clip in clips {
        let Some(spec) = SPECS.iter().find(|s| s.name == clip.name) else {
            continue;
        };
        let rate = 0.3 + 0.45 * spec.velocity.length();
        let breaths = (clip.duration * rate).round().max(1.0);
        const KEYS_PER_BREATH: usize = 12;
        let keys = breaths as usize * KEYS_PER_BREATH;
        let times: Vec<f32> = (0..=keys).map(|k| clip.duration * k as f32 / keys as f32).collect();
        let values = times
            .iter()
            .map(|t| 0.5 - 0.5 * (std::f32::consts::TAU * breaths * t / clip.duration).cos())
            .collect();
        clip.morph_weights = vec![Track {
            interpolation: Interpolation::Linear,
            times,
            values,
        }];
    }
}
