//! Authoring helpers for layers: masks (partial-skeleton blending) and difference clips
//! (additive animation), Game Engine Architecture §11.6.4–11.6.5. Masks are added to a library
//! with [`crate::LibraryBuilder::add_mask`], difference clips with `add_clip` like any clip, and
//! both are played through [`crate::gpu::Layer`]s.

use crate::clip::{Clip, Interpolation, JointTrack, Track};
use crate::error::{Error, Result};
use crate::reference::{self, TransformF64};
use crate::skeleton::Skeleton;
use glam::{DQuat, DVec3};

/// A mask over `joint`'s subtree: 0 outside it, ramping `(k + 1) / depth` over the first `depth`
/// levels below the joint (the joint itself is level 0) and 1 deeper, so the boundary of a
/// partial-skeleton blend does not show as a kink. `depth` 0 or 1 gives 1 on the whole subtree.
pub fn mask_from_joint(skeleton: &Skeleton, joint: &str, depth: u32) -> Result<Vec<f32>> {
    let root = skeleton.joint_index(joint).ok_or_else(|| Error::SkeletonShape {
        skeleton: skeleton.name().to_string(),
        what: format!("a mask names joint '{joint}', which the skeleton does not have"),
    })?;
    let parents = skeleton.parents();
    let mut level: Vec<Option<u32>> = vec![None; parents.len()];
    level[root] = Some(0);
    for j in root + 1..parents.len() {
        if let Some(p) = parents[j] {
            level[j] = level[p as usize].map(|k| k + 1);
        }
    }
    Ok(level
        .iter()
        .map(|l| match l {
            None => 0.0,
            Some(k) if depth <= 1 || *k + 1 >= depth => 1.0,
            Some(k) => (*k + 1) as f32 / depth as f32,
        })
        .collect())
}

/// A mask of weight 1 on the named joints and 0 elsewhere.
pub fn mask_from_joints(skeleton: &Skeleton, joints: &[&str]) -> Result<Vec<f32>> {
    let mut w = vec![0.0; skeleton.joint_count()];
    for name in joints {
        let j = skeleton.joint_index(name).ok_or_else(|| Error::SkeletonShape {
            skeleton: skeleton.name().to_string(),
            what: format!("a mask names joint '{name}', which the skeleton does not have"),
        })?;
        w[j] = 1.0;
    }
    Ok(w)
}

/// What a difference clip is taken relative to.
#[derive(Clone, Copy, Debug)]
pub enum Reference<'a> {
    /// One pose: `clip` at `time` seconds.
    Pose {
        /// The clip.
        clip: &'a Clip,
        /// Where to sample it.
        time: f32,
    },
    /// A whole clip of the source's duration, frame for frame.
    Clip(&'a Clip),
}

/// Keys per second of a difference clip.
pub const DIFFERENCE_KEY_RATE: f32 = 30.0;

/// The most keys a difference clip may have, counted over all its joints (keys per joint times
/// joints): 4,194,304, about 200 MB while it is built. A 53-joint character may have difference
/// clips of 44 minutes.
pub const MAX_DIFFERENCE_JOINT_KEYS: usize = 1 << 22;

/// The difference clip `D = R⁻¹ S` of `source` against `reference`, per joint and channel:
/// `Δq = q_R⁻¹ q_S`, `Δt = t_S − t_R`, `Δs = s_S / s_R`, sampled at [`DIFFERENCE_KEY_RATE`] keys
/// per second (and at the end) with the f64 reference sampler, linear. Applying it to `R` with
/// weight 1 gives `S` back. It is named `name` and loops if the source does.
///
/// Errors: a clip that animates joints `skeleton` lacks, a reference clip whose duration differs
/// from the source's, a non-finite key or a zero reference scale.
pub fn difference_clip(skeleton: &Skeleton, name: &str, source: &Clip, reference: Reference<'_>) -> Result<Clip> {
    let err = |what: String| Error::Clip {
        clip: name.to_string(),
        what,
    };
    // The clips are sampled below as they are: each must be one the builder would take.
    source.validate(skeleton)?;
    let reference_at: Box<dyn Fn(f64) -> Vec<TransformF64>> = match reference {
        Reference::Pose { clip, time } => {
            clip.validate(skeleton)?;
            if !time.is_finite() {
                return Err(err(format!("reference time {time} is not finite")));
            }
            let pose = reference::sample(skeleton, clip, f64::from(time));
            Box::new(move |_| pose.clone())
        }
        Reference::Clip(clip) => {
            clip.validate(skeleton)?;
            if (clip.duration - source.duration).abs() > 1e-4 {
                return Err(err(format!(
                    "reference clip '{}' lasts {} s but the source '{}' lasts {} s",
                    clip.name, clip.duration, source.name, source.duration
                )));
            }
            Box::new(move |t| reference::sample(skeleton, clip, t))
        }
    };
    let frames = (f64::from(source.duration) * f64::from(DIFFERENCE_KEY_RATE))
        .ceil()
        .max(1.0);
    let n = skeleton.joint_count();
    if frames * n.max(1) as f64 > MAX_DIFFERENCE_JOINT_KEYS as f64 {
        return Err(err(format!(
            "source '{}' lasts {} s: {frames} keys for each of {n} joints, more than {MAX_DIFFERENCE_JOINT_KEYS} in all",
            source.name, source.duration
        )));
    }
    let frames = frames as usize;
    let times: Vec<f32> = (0..=frames)
        .map(|k| (k as f32 / DIFFERENCE_KEY_RATE).min(source.duration))
        .collect();
    let mut t_keys = vec![Vec::with_capacity(times.len()); n];
    let mut r_keys: Vec<Vec<DQuat>> = vec![Vec::with_capacity(times.len()); n];
    let mut s_keys = vec![Vec::with_capacity(times.len()); n];
    for &t in &times {
        let s_pose = reference::sample(skeleton, source, f64::from(t));
        let r_pose = reference_at(f64::from(t));
        for j in 0..n {
            let (s, r) = (&s_pose[j], &r_pose[j]);
            if r.scale.abs().min_element() < 1e-12 {
                return Err(err(format!(
                    "joint '{}': the reference scale is zero",
                    skeleton.joint_names()[j]
                )));
            }
            let mut dq = r.rotation.inverse() * s.rotation;
            // Keep consecutive keys on the same hemisphere so interpolation takes the short way.
            if let Some(prev) = r_keys[j].last() {
                if prev.dot(dq) < 0.0 {
                    dq = -dq;
                }
            }
            t_keys[j].push(s.translation - r.translation);
            r_keys[j].push(dq);
            s_keys[j].push(s.scale / r.scale);
        }
    }
    let f32v = |v: DVec3| v.as_vec3();
    let tracks = (0..n)
        .map(|j| {
            let track = |values: Vec<glam::Vec3>| Track {
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values,
            };
            JointTrack {
                joint: skeleton.joint_names()[j].clone(),
                translation: Some(track(t_keys[j].iter().map(|v| f32v(*v)).collect())),
                rotation: Some(Track {
                    interpolation: Interpolation::Linear,
                    times: times.clone(),
                    values: r_keys[j].iter().map(|q| q.as_quat()).collect(),
                }),
                scale: Some(track(s_keys[j].iter().map(|v| f32v(*v)).collect())),
            }
        })
        .collect::<Vec<_>>();
    // Strictly increasing times: a duration that is a whole number of frames repeats the end.
    let mut clip = Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: name.to_string(),
        duration: source.duration,
        looping: source.looping,
        tracks,
    };
    for t in &mut clip.tracks {
        dedup_end(t);
    }
    if let Some(v) = clip
        .tracks
        .iter()
        .flat_map(|t| t.rotation.iter().flat_map(|r| r.values.iter()))
        .find(|q| !q.is_finite())
    {
        return Err(err(format!("a difference key is not finite ({v:?})")));
    }
    Ok(clip)
}

fn dedup_end(t: &mut JointTrack) {
    fn fix<T>(tr: &mut Option<Track<T>>) {
        if let Some(tr) = tr {
            let n = tr.times.len();
            if n >= 2 && tr.times[n - 1] <= tr.times[n - 2] {
                tr.times.pop();
                tr.values.remove(n - 2);
            }
        }
    }
    fix(&mut t.translation);
    fix(&mut t.rotation);
    fix(&mut t.scale);
}
