//! Root motion extraction (Game Engine Architecture §11.4, "root motion"): the motion of a chosen
//! joint taken out of a clip into a track of its own, so that the clip animates in place and the
//! GPU moves the character by the track ([`crate::gpu::Controller::set_root_motion`]).
//!
//! The joint's frame `F(t)` — its position on the ground and its heading ([`RootMotionMode::Planar`]),
//! or its full position and rotation ([`RootMotionMode::Full`]), rotations relative to its rest
//! pose — is sampled in f64 from the authoring clip ([`crate::reference`]). The track is
//! `G(t) = F(0)⁻¹ F(t)`, the root's motion since the clip's start; the joint's pose becomes
//! `F(t)⁻¹ M(t)` in model space, the clip with its root at the origin. A character at `W` that
//! plays the clip from 0 to `t` stands at `W · G(t)`, where it stood at `W · F(0)⁻¹ · M(t)` in the
//! clip: the motion is the clip's. Over loops the track repeats: a whole loop moves the root by
//! `G(T)`.

use crate::clip::{Clip, Interpolation, Track};
use crate::error::{Error, Result};
use crate::reference::{local_to_model, sample};
use crate::skeleton::Skeleton;
use glam::{DMat4, DQuat, DVec3, Quat, Vec3};

/// Most uniform samples of one clip's root motion (`duration · rate`): 18 minutes at 60 a second.
pub const MAX_ROOT_SAMPLES: u32 = 1 << 16;

/// What root motion keeps of the joint's motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RootMotionMode {
    /// Its position on the ground (x, z) and its heading (the yaw of its forward axis): a walk's
    /// motion; the bob, sway and tilt stay in the pose.
    #[default]
    Planar,
    /// Its full position and rotation (a jump, a climb).
    Full,
}

/// How root motion is extracted from a clip.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMotion {
    /// The joint whose motion is extracted; `None`: the skeleton's first joint (its root). Its
    /// ancestors' motion, if any, stays in the pose.
    pub joint: Option<String>,
    /// What is extracted.
    pub mode: RootMotionMode,
    /// Samples per second of the root track and of the joint's new keys (besides its own key
    /// times): 60 by default.
    pub rate: f32,
}

impl Default for RootMotion {
    fn default() -> Self {
        Self {
            joint: None,
            mode: RootMotionMode::Planar,
            rate: 60.0,
        }
    }
}

/// A clip's root motion: `G(t)` at key times, linearly interpolated (rotations slerped).
#[derive(Clone, Debug, PartialEq)]
pub struct RootTrack {
    /// Key times, from 0 to the clip's duration.
    pub times: Vec<f32>,
    /// Translations: where the root stands relative to where it stood at 0, in that frame.
    pub translations: Vec<Vec3>,
    /// Rotations: how it turned since 0.
    pub rotations: Vec<Quat>,
}

impl RootTrack {
    /// The translation track.
    #[must_use]
    pub fn translation_track(&self) -> Track<Vec3> {
        Track::linear(self.times.iter().copied().zip(self.translations.iter().copied()))
    }

    /// The rotation track.
    #[must_use]
    pub fn rotation_track(&self) -> Track<Quat> {
        Track::linear(self.times.iter().copied().zip(self.rotations.iter().copied()))
    }
}

/// The frame `F(t)` of `joint`'s model matrix `m` (f64): position and rotation relative to the
/// joint's rest rotation `rest`, on the ground for [`RootMotionMode::Planar`].
#[must_use]
pub fn root_frame(m: &DMat4, rest: DQuat, mode: RootMotionMode) -> (DVec3, DQuat) {
    let (_, rotation, translation) = m.to_scale_rotation_translation();
    let relative = (rotation * rest.inverse()).normalize();
    match mode {
        RootMotionMode::Full => (translation, relative),
        RootMotionMode::Planar => {
            let forward = relative * DVec3::Z;
            let yaw = forward.x.atan2(forward.z);
            (
                DVec3::new(translation.x, 0.0, translation.z),
                DQuat::from_rotation_y(yaw),
            )
        }
    }
}

/// `G(t) = F(0)⁻¹ F(t)` in f64: the root motion of `clip` at `t` seconds, computed from the
/// authoring data (the oracle of the extracted track).
///
/// Errors: as [`extract`] (a joint the skeleton lacks).
pub fn root_motion_at(skeleton: &Skeleton, clip: &Clip, motion: &RootMotion, t: f64) -> Result<(DVec3, DQuat)> {
    let j = root_joint(skeleton, clip, motion)?;
    let rest = rest_rotation(skeleton, j);
    let frame = |t: f64| {
        let model = local_to_model(skeleton, &sample(skeleton, clip, t));
        root_frame(&model[j], rest, motion.mode)
    };
    let (p0, q0) = frame(0.0);
    let (p, q) = frame(t);
    let inv = q0.inverse();
    Ok((inv * (p - p0), (inv * q).normalize()))
}

fn root_joint(skeleton: &Skeleton, clip: &Clip, motion: &RootMotion) -> Result<usize> {
    match &motion.joint {
        None if skeleton.joint_count() > 0 => Ok(0),
        None => Err(Error::Clip {
            clip: clip.name.clone(),
            what: format!("root motion: skeleton '{}' has no joint", skeleton.name()),
        }),
        Some(name) => skeleton.joint_index(name).ok_or_else(|| Error::Clip {
            clip: clip.name.clone(),
            what: format!("root motion: skeleton '{}' has no joint '{name}'", skeleton.name()),
        }),
    }
}

fn rest_rotation(skeleton: &Skeleton, j: usize) -> DQuat {
    let (_, r, _) = skeleton.rest_model_matrices()[j]
        .as_dmat4()
        .to_scale_rotation_translation();
    r.normalize()
}

/// Extracts `motion` from `clip`: the clip in place (the joint's translation and rotation keyed
/// anew, linearly, at its own key times and `motion.rate` samples a second) and its root track.
/// The clip must be valid for `skeleton` ([`Clip::validate`](crate::Clip::validate)).
///
/// Errors: a joint the skeleton lacks, a rate that is not finite and positive, more than
/// [`MAX_ROOT_SAMPLES`] samples, a clip that does not validate.
pub fn extract(skeleton: &Skeleton, clip: &Clip, motion: &RootMotion) -> Result<(Clip, RootTrack)> {
    clip.validate(skeleton)?;
    if !(motion.rate.is_finite() && motion.rate > 0.0) {
        return Err(Error::Clip {
            clip: clip.name.clone(),
            what: format!("root motion: rate {} must be finite and positive", motion.rate),
        });
    }
    let j = root_joint(skeleton, clip, motion)?;
    let rest = rest_rotation(skeleton, j);
    let name = &skeleton.joint_names()[j];
    // Sample times: the joint's own keys and a uniform grid, within [0, duration].
    let duration = clip.duration;
    let samples = (f64::from(duration) * f64::from(motion.rate)).ceil();
    if samples > f64::from(MAX_ROOT_SAMPLES) {
        return Err(Error::Clip {
            clip: clip.name.clone(),
            what: format!(
                "root motion: {samples} samples of {duration} s at {} a second; at most {MAX_ROOT_SAMPLES}",
                motion.rate
            ),
        });
    }
    let steps = (samples as usize).max(1);
    let mut times: Vec<f32> = (0..=steps)
        .map(|k| (f64::from(duration) * k as f64 / steps as f64) as f32)
        .collect();
    if let Some(track) = clip.tracks.iter().find(|t| t.joint == *name) {
        let own = |t: Option<&[f32]>| t.map(<[f32]>::to_vec).unwrap_or_default();
        times.extend(own(track.translation.as_ref().map(|t| t.times.as_slice())));
        times.extend(own(track.rotation.as_ref().map(|t| t.times.as_slice())));
    }
    times.retain(|t| (0.0..=duration).contains(t));
    times.sort_by(f32::total_cmp);
    times.dedup();
    let parent = skeleton.parents()[j].map(|p| p as usize);
    let mut frames = Vec::with_capacity(times.len());
    let mut locals = Vec::with_capacity(times.len());
    for &t in &times {
        let local = sample(skeleton, clip, f64::from(t));
        let model = local_to_model(skeleton, &local);
        let (p, q) = root_frame(&model[j], rest, motion.mode);
        let f = DMat4::from_rotation_translation(q, p);
        // The joint's model matrix becomes F⁻¹ M: its local, P⁻¹ F⁻¹ P L.
        let parent_model = parent.map_or(DMat4::IDENTITY, |p| model[p]);
        let new_local = parent_model.inverse() * f.inverse() * model[j];
        locals.push(new_local);
        frames.push((p, q));
    }
    let (p0, q0) = frames[0];
    let inv0 = q0.inverse();
    let track = RootTrack {
        times: times.clone(),
        translations: frames.iter().map(|(p, _)| (inv0 * (*p - p0)).as_vec3()).collect(),
        rotations: frames.iter().map(|(_, q)| (inv0 * *q).normalize().as_quat()).collect(),
    };
    let mut in_place = clip.clone();
    let joint_track = match in_place.tracks.iter_mut().find(|t| t.joint == *name) {
        Some(t) => t,
        None => {
            in_place.tracks.push(crate::clip::JointTrack {
                joint: name.clone(),
                ..Default::default()
            });
            in_place.tracks.last_mut().expect("just pushed")
        }
    };
    let (mut translations, mut rotations) = (Vec::new(), Vec::new());
    for m in &locals {
        let (_, r, t) = m.to_scale_rotation_translation();
        translations.push(t.as_vec3());
        let mut q = r.normalize().as_quat();
        if let Some(prev) = rotations.last() {
            if q.dot(*prev) < 0.0 {
                q = -q;
            }
        }
        rotations.push(q);
    }
    joint_track.translation = Some(Track {
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: translations,
    });
    joint_track.rotation = Some(Track {
        interpolation: Interpolation::Linear,
        times,
        values: rotations,
    });
    Ok((in_place, track))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{local_to_model, sample};

    /// The mannequin's walk with a turn added (yaw growing over the clip) — to its pelvis in the
    /// in-place walk, extracted planar from the pelvis (hips projected to the ground); to its
    /// root in the walk whose root moves, extracted in full from the root: the in-place clip
    /// placed by its root track, `G(t) · M'(t)`, is the original clip placed at its start,
    /// `F(0)⁻¹ M(t)`, for the joint and every joint below it (its ancestors keep their motion;
    /// within 1e-4 m, the resampling's error); the track equals the f64 oracle at its keys.
    #[test]
    fn the_in_place_clip_moved_by_its_track_is_the_clip() {
        let skeleton = crate::mannequin::skeleton();
        let turned = |mut clip: Clip, joint: &str| {
            let d = clip.duration;
            let track = clip.tracks.iter_mut().find(|t| t.joint == joint).unwrap();
            let r = track
                .rotation
                .get_or_insert_with(|| Track::linear((0..=30).map(|k| (d * k as f32 / 30.0, Quat::IDENTITY))));
            for (t, q) in r.times.iter().zip(r.values.iter_mut()) {
                *q = Quat::from_rotation_y(1.3 * t / d) * *q;
            }
            clip
        };
        let cases = [
            (
                turned(crate::mannequin::clips(&skeleton)[1].clone(), "pelvis"),
                RootMotion {
                    joint: Some("pelvis".into()),
                    ..Default::default()
                },
            ),
            (
                turned(crate::mannequin::clips_with_root_motion(&skeleton)[1].clone(), "root"),
                RootMotion {
                    joint: Some("root".into()),
                    mode: RootMotionMode::Full,
                    ..Default::default()
                },
            ),
        ];
        for (clip, motion) in cases {
            let d = clip.duration;
            let (in_place, track) = extract(&skeleton, &clip, &motion).unwrap();
            let j = skeleton.joint_index(motion.joint.as_deref().unwrap()).unwrap();
            let rest = rest_rotation(&skeleton, j);
            let m0 = local_to_model(&skeleton, &sample(&skeleton, &clip, 0.0));
            let (p0, q0) = root_frame(&m0[j], rest, motion.mode);
            let f0_inv = DMat4::from_rotation_translation(q0, p0).inverse();
            // The joint and the joints below it.
            let parents = skeleton.parents();
            let below = |mut i: usize| loop {
                if i == j {
                    return true;
                }
                match parents[i] {
                    Some(p) => i = p as usize,
                    None => return false,
                }
            };
            let mut worst = 0.0f64;
            for k in 0..=40 {
                let t = f64::from(d) * f64::from(k) / 40.0 * 0.999;
                let (gt, gq) = root_motion_at(&skeleton, &clip, &motion, t).unwrap();
                let g = DMat4::from_rotation_translation(gq, gt);
                let moved = local_to_model(&skeleton, &sample(&skeleton, &in_place, t));
                let original = local_to_model(&skeleton, &sample(&skeleton, &clip, t));
                for (_, (a, b)) in moved.iter().zip(&original).enumerate().filter(|(i, _)| below(*i)) {
                    let a = (g * *a).w_axis.truncate();
                    let b = (f0_inv * *b).w_axis.truncate();
                    worst = worst.max((a - b).length());
                }
            }
            assert!(worst < 1e-4, "{motion:?}: {worst} m");
            for (k, &t) in track.times.iter().enumerate() {
                let (gt, gq) = root_motion_at(&skeleton, &clip, &motion, f64::from(t)).unwrap();
                assert!((track.translations[k].as_dvec3() - gt).length() < 1e-5);
                assert!(track.rotations[k].as_dquat().dot(gq).abs() > 1.0 - 1e-6);
            }
            let turned = track.rotations.last().unwrap().angle_between(Quat::IDENTITY);
            assert!(turned > 0.5, "{motion:?}: the turn is in the track ({turned} rad)");
        }
    }
}
