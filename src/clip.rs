//! Clips in authoring form: per-joint translation, rotation and scale tracks with key times,
//! values and an interpolation mode (glTF 2.0 semantics). [`Clip::validate`] checks one against
//! a skeleton; [`crate::LibraryBuilder`] validates and packs them for the GPU.

use crate::error::{Channel, Error, Result};
use crate::layout::MAX_CLIP_EVENTS;
use crate::skeleton::Skeleton;
use glam::{Quat, Vec3};

pub use crate::id::ClipId;

/// How values between two keys are computed (glTF 2.0 `sampler.interpolation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// Hold the earlier key's value until the next key.
    Step,
    /// Lerp translation and scale; slerp rotation along the shorter arc.
    #[default]
    Linear,
    /// Cubic Hermite spline; each key has an in-tangent, a value and an out-tangent, and tangents
    /// are scaled by the key interval. Rotations are normalized after.
    CubicSpline,
}

impl Interpolation {
    /// The code the GPU uses (`INTERP_*` in `shaders/shared/types.wgsl`).
    #[must_use]
    pub const fn gpu_code(self) -> u32 {
        match self {
            Interpolation::Step => 0,
            Interpolation::Linear => 1,
            Interpolation::CubicSpline => 2,
        }
    }
}

/// Keys of one channel. For [`Interpolation::CubicSpline`], `values` holds three entries per key,
/// `[in_tangent, value, out_tangent]`, as glTF stores them; otherwise one per key.
#[derive(Clone, Debug, PartialEq)]
pub struct Track<T> {
    /// How to interpolate between keys.
    pub interpolation: Interpolation,
    /// Key times in seconds, strictly increasing.
    pub times: Vec<f32>,
    /// Key values (see the type's docs for cubic splines).
    pub values: Vec<T>,
}

/// A track without keys (step interpolation): in [`Clip::morph_weights`], one that drives
/// nothing.
impl<T> Default for Track<T> {
    fn default() -> Self {
        Self {
            interpolation: Interpolation::Step,
            times: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<T: Copy> Track<T> {
    /// A track that holds one value for the whole clip (stored once).
    #[must_use]
    pub fn constant(value: T) -> Self {
        Self {
            interpolation: Interpolation::Step,
            times: vec![0.0],
            values: vec![value],
        }
    }

    /// A linearly interpolated track from `(time, value)` pairs.
    #[must_use]
    pub fn linear(keys: impl IntoIterator<Item = (f32, T)>) -> Self {
        let (times, values) = keys.into_iter().unzip();
        Self {
            interpolation: Interpolation::Linear,
            times,
            values,
        }
    }
}

/// The tracks that animate one joint, named by the joint. A missing channel holds the skeleton's
/// rest value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointTrack {
    /// The joint's name in the skeleton.
    pub joint: String,
    /// Translation keys.
    pub translation: Option<Track<Vec3>>,
    /// Rotation keys (normalized when the library is built).
    pub rotation: Option<Track<Quat>>,
    /// Scale keys.
    pub scale: Option<Track<Vec3>>,
}

impl JointTrack {
    /// Whether the joint has keys for `channel`.
    #[must_use]
    pub fn has(&self, channel: crate::error::Channel) -> bool {
        match channel {
            crate::error::Channel::Translation => self.translation.is_some(),
            crate::error::Channel::Rotation => self.rotation.is_some(),
            crate::error::Channel::Scale => self.scale.is_some(),
        }
    }
}

/// A clip: a named set of joint tracks over `[0, duration]`.
///
/// A looping clip should end on the pose it starts with; sampling wraps from `duration` to 0, so
/// when it does there is no seam.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// Name, unique within its skeleton's clips.
    pub name: String,
    /// Length in seconds (> 0). Keys past it are never reached.
    pub duration: f32,
    /// Whether instances loop it by default.
    pub looping: bool,
    /// Tracks, at most one per joint.
    pub tracks: Vec<JointTrack>,
    /// Events: named times the GPU reports when playback crosses them (Game Engine Architecture
    /// §11.4: event triggers). See [`ClipEvent`].
    pub events: Vec<ClipEvent>,
    /// Float curves (meta channels): named scalars over time, blended with the clip. See
    /// [`FloatCurve`].
    pub curves: Vec<FloatCurve>,
    /// Morph-target weights over time, by target: track `t` drives weight `t` of the characters
    /// that play the clip (`AnimatorDesc::morph_weights`), blended on the GPU as the joints are
    /// (cross-fades, blend trees, layers); a track without keys leaves its target to the other
    /// clips and the character's own weight (`Controller::set_morph_weights`). The glTF importer
    /// fills it from a `weights` channel.
    pub morph_weights: Vec<Track<f32>>,
}

impl Clip {
    /// A clip of `duration` seconds that holds the rest pose (no tracks), looping: a state whose
    /// motion only needs a length, as scripted state-machine runs use.
    #[must_use]
    pub fn rest_pose(name: &str, duration: f32) -> Self {
        Self {
            name: name.into(),
            duration,
            looping: true,
            tracks: Vec::new(),
            events: Vec::new(),
            curves: Vec::new(),
            morph_weights: Vec::new(),
        }
    }
}

/// A named scalar over a clip's time (a meta channel, Game Engine Architecture §11.4): a
/// foot-plant flag, an IK weight, a blend-shape weight. Every frame the GPU samples it where the
/// clip plays and blends it with the clip's weight, as the joints are, into the character's
/// value of that name ([`crate::layout::GpuOutput::curves`]); a clip without a curve of that name
/// counts as 0 in the blend.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatCurve {
    /// Name, shared by every clip that has the curve: the library numbers curve names
    /// ([`crate::AnimationLibrary::curve_names`], at most [`crate::layout::MAX_CURVES`]).
    pub name: String,
    /// Keys (step, linear or cubic spline, as joint tracks).
    pub track: Track<f32>,
}

/// A named moment of a clip (a foot landing, a sword's swing hitting). Each frame, for every
/// character whose playback of the clip crosses `time` — forward or backward, through loop wraps,
/// once per crossing — while the clip's blend weight is at least `threshold`, the GPU appends a
/// record naming the character, the event and the clip ([`crate::layout::GpuEventRecord`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ClipEvent {
    /// Name, shared by every clip that has the event (`"foot_l"`): the library numbers event names
    /// ([`crate::AnimationLibrary::event_names`]) and records carry the number.
    pub name: String,
    /// Seconds into the clip, in `[0, duration]`. In a looping clip, `duration` is the same moment
    /// as 0 (crossed once per loop).
    pub time: f32,
    /// Least blend weight of the clip, in `[0, 1]`, for the event to fire: a walk cross-fading out
    /// under a run should not step twice. 0 fires whenever the clip plays with any weight.
    pub threshold: f32,
}

impl ClipEvent {
    /// An event `name` at `time` seconds with threshold 0.
    #[must_use]
    pub fn new(name: &str, time: f32) -> Self {
        Self {
            name: name.to_owned(),
            time,
            threshold: 0.0,
        }
    }
}

impl Clip {
    /// The latest key time over all tracks.
    #[must_use]
    pub fn last_key_time(&self) -> f32 {
        let last = |t: Option<&[f32]>| t.and_then(|t| t.last().copied()).unwrap_or(0.0);
        self.tracks
            .iter()
            .map(|t| {
                last(t.translation.as_ref().map(|t| t.times.as_slice()))
                    .max(last(t.rotation.as_ref().map(|t| t.times.as_slice())))
                    .max(last(t.scale.as_ref().map(|t| t.times.as_slice())))
            })
            .fold(0.0, f32::max)
    }
}

impl Clip {
    /// Checks the clip against `skeleton` as [`crate::LibraryBuilder::add_clip`] does: a finite
    /// positive duration; at most [`MAX_CLIP_EVENTS`] events, each named, within
    /// `[0, duration]` and with a threshold in `[0, 1]`; only joints the skeleton has, one track
    /// per joint; every track's keys (at least one, times finite, not negative and increasing,
    /// the right number of values, values finite, rotations not zero); float curves named,
    /// distinct, with keys as a joint track's.
    ///
    /// Errors: [`Error::Clip`] or [`Error::Track`], naming the clip, joint and channel.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<()> {
        self.validated_tracks(skeleton).map(|_| ())
    }

    /// [`Clip::validate`], then each joint's track by the skeleton's joint order (what the
    /// builder packs).
    pub(crate) fn validated_tracks(&self, skeleton: &Skeleton) -> Result<Vec<Option<&JointTrack>>> {
        let by_joint = self.tracks_by_joint(skeleton)?;
        for (j, track) in by_joint.iter().enumerate() {
            let terr = |channel, what: String| Error::Track {
                clip: self.name.clone(),
                joint: skeleton.joint_names()[j].clone(),
                channel,
                what,
            };
            if let Some(t) = track.and_then(|t| t.translation.as_ref()) {
                t.check_vectors().map_err(|e| terr(Channel::Translation, e))?;
            }
            if let Some(t) = track.and_then(|t| t.rotation.as_ref()) {
                t.check_rotations().map_err(|e| terr(Channel::Rotation, e))?;
            }
            if let Some(t) = track.and_then(|t| t.scale.as_ref()) {
                t.check_vectors().map_err(|e| terr(Channel::Scale, e))?;
            }
        }
        for (k, c) in self.curves.iter().enumerate() {
            let cerr = |what: String| Error::Clip {
                clip: self.name.clone(),
                what: format!("curve {k} ('{}'): {what}", c.name),
            };
            if c.name.is_empty() {
                return Err(cerr("has no name".into()));
            }
            if self.curves[..k].iter().any(|d| d.name == c.name) {
                return Err(cerr("a curve of that name comes before it".into()));
            }
            c.track.check_keys().map_err(cerr)?;
            if let Some(k) = c.track.values.iter().position(|v| !v.is_finite()) {
                return Err(cerr(format!("value {k} is not finite")));
            }
        }
        if self.morph_weights.len() > crate::layout::MAX_MORPH_TARGETS as usize {
            return Err(Error::Clip {
                clip: self.name.clone(),
                what: format!(
                    "{} morph-weight tracks; a clip may have {}",
                    self.morph_weights.len(),
                    crate::layout::MAX_MORPH_TARGETS
                ),
            });
        }
        for (t, track) in self
            .morph_weights
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.times.is_empty())
        {
            let cerr = |what: String| Error::Clip {
                clip: self.name.clone(),
                what: format!("morph-weight track of target {t}: {what}"),
            };
            track.check_keys().map_err(cerr)?;
            if let Some((k, v)) = track
                .values
                .iter()
                .enumerate()
                .find(|(_, v)| !crate::layout::morph_weight_ok(**v))
            {
                return Err(cerr(format!(
                    "value {k} is {v}: not finite or beyond ±{}",
                    crate::layout::MAX_MORPH_WEIGHT
                )));
            }
        }
        Ok(by_joint)
    }

    /// Each joint's track, by the skeleton's joint order, after checking the clip's duration, its
    /// events, and that it animates only joints of `skeleton`, each once (the first checks of
    /// [`Clip::validate`], in its order).
    ///
    /// Errors: as [`Clip::validate`].
    pub fn tracks_by_joint(&self, skeleton: &Skeleton) -> Result<Vec<Option<&JointTrack>>> {
        let cerr = |what: String| Error::Clip {
            clip: self.name.clone(),
            what,
        };
        if !self.duration.is_finite() || self.duration <= 0.0 {
            return Err(cerr(format!("duration {} must be finite and positive", self.duration)));
        }
        if self.events.len() > MAX_CLIP_EVENTS as usize {
            return Err(cerr(format!(
                "has {} events; a clip may have {MAX_CLIP_EVENTS}",
                self.events.len()
            )));
        }
        for (k, e) in self.events.iter().enumerate() {
            let what = if e.name.is_empty() {
                Some("has no name".to_owned())
            } else if !(0.0..=self.duration).contains(&e.time) {
                Some(format!("time {} is outside [0, {}]", e.time, self.duration))
            } else if !(0.0..=1.0).contains(&e.threshold) {
                Some(format!("threshold {} is outside [0, 1]", e.threshold))
            } else {
                None
            };
            if let Some(what) = what {
                return Err(cerr(format!("event {k} ('{}'): {what}", e.name)));
            }
        }
        let mut by_joint: Vec<Option<&JointTrack>> = vec![None; skeleton.joint_count()];
        for t in &self.tracks {
            let j = skeleton.joint_index(&t.joint).ok_or_else(|| {
                cerr(format!(
                    "animates joint '{}', which skeleton '{}' does not have",
                    t.joint,
                    skeleton.name()
                ))
            })?;
            if by_joint[j].replace(t).is_some() {
                return Err(cerr(format!("has two tracks for joint '{}'", t.joint)));
            }
        }
        Ok(by_joint)
    }
}

impl<T> Track<T> {
    /// At least one key, times finite, not negative and increasing, and one value per key (three
    /// for a cubic spline: in-tangent, value, out-tangent).
    ///
    /// Errors: what is wrong, naming the key.
    pub fn check_keys(&self) -> std::result::Result<(), String> {
        if self.times.is_empty() {
            return Err("has no keys".into());
        }
        for (k, &t) in self.times.iter().enumerate() {
            if !t.is_finite() || t < 0.0 {
                return Err(format!("key {k}: time {t} must be finite and not negative"));
            }
            if k > 0 && t <= self.times[k - 1] {
                return Err(format!(
                    "key {k}: time {t} is not after the previous key's {}",
                    self.times[k - 1]
                ));
            }
        }
        let per_key = if self.interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if self.values.len() != self.times.len() * per_key {
            return Err(format!(
                "{} keys need {} values ({per_key} per key), found {}",
                self.times.len(),
                self.times.len() * per_key,
                self.values.len()
            ));
        }
        Ok(())
    }
}

impl Track<Vec3> {
    /// [`Track::check_keys`], and every value finite.
    ///
    /// Errors: what is wrong, naming the key or value.
    pub fn check_vectors(&self) -> std::result::Result<(), String> {
        self.check_keys()?;
        match self.values.iter().position(|v| !v.is_finite()) {
            Some(k) => Err(format!("value {k} is not finite")),
            None => Ok(()),
        }
    }
}

/// The most a cubic rotation segment's tangents times its span may reach
/// ([`Track::check_rotations`]): far beyond any rotation curve (a unit quaternion's neighbours
/// are within 2), and far enough from f32's limits that the unnormalized Hermite sum never
/// overflows.
pub const MAX_ROTATION_TANGENT_REACH: f64 = 1.0e6;

impl Track<Quat> {
    /// [`Track::check_keys`], every value finite and every key value (not a cubic spline's
    /// tangent) of length at least 1e-6 (measured in f64: a quaternion of components near
    /// `f32::MAX` has a length, and is normalized as any other). For a cubic spline, each
    /// segment's tangents times its span may reach at most [`MAX_ROTATION_TANGENT_REACH`]
    /// (what they add between two unit keys before the result is normalized).
    ///
    /// Errors: what is wrong, naming the key or value.
    pub fn check_rotations(&self) -> std::result::Result<(), String> {
        self.check_keys()?;
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let length = |q: &Quat| q.as_dquat().length();
        for (k, q) in self.values.iter().enumerate() {
            if !q.is_finite() {
                return Err(format!("value {k} is not finite"));
            }
            if (!cubic || k % 3 == 1) && length(q) < 1e-6 {
                return Err(format!("value {k} is a zero-length quaternion"));
            }
        }
        if cubic {
            for k in 1..self.times.len().min(self.values.len() / 3) {
                let span = f64::from(self.times[k]) - f64::from(self.times[k - 1]);
                let reach = span * (length(&self.values[3 * (k - 1) + 2]) + length(&self.values[3 * k]));
                if reach.is_nan() || reach > MAX_ROTATION_TANGENT_REACH {
                    return Err(format!(
                        "keys {} and {k}: tangents times the span reach {reach:.3e}; at most {MAX_ROTATION_TANGENT_REACH:.0e}",
                        k - 1
                    ));
                }
            }
        }
        Ok(())
    }
}
