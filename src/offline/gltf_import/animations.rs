//! Clips from animations: channels and their samplers, key times, interpolation, translation,
//! rotation and scale tracks, morph-target weights as the clip's morph-weight tracks, and events
//! from extras.

use super::accessors::{FLOAT, MORPH_WEIGHT_TYPES, ROTATION_TYPES, Want, dims_count};
use super::{AnimationInfo, ChannelInfo, ChannelPath, ImportedClip, ImportedSkeleton, Importer};
use crate::clip::{Clip, ClipEvent, Interpolation, JointTrack, Track};
use crate::error::{Error, Result};
use glam::{Quat, Vec3};
use gltf::accessor::Dimensions;
use gltf::animation::Property;
use std::collections::{BTreeMap, BTreeSet};

impl Importer<'_> {
    fn interpolation(i: gltf::animation::Interpolation) -> Interpolation {
        match i {
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        }
    }

    /// The events of an animation, from its `extras` (glTF has no standard for them):
    /// `"extras": {"events": [{"name": "foot_down_l", "time": 0.42, "threshold": 0.5}]}`, times in
    /// seconds on the animation's time line (within `[0, duration]`), `threshold` optional (0).
    /// Extras without `events` are ignored; an `events` entry of another shape is an error naming
    /// the animation and the entry.
    fn animation_events(&self, anim: &gltf::Animation<'_>, name: &str, duration: f32) -> Result<Vec<ClipEvent>> {
        let Some(raw) = anim.extras() else {
            return Ok(Vec::new());
        };
        let err = |what: String| Error::Asset {
            file: self.file.clone(),
            what: format!("animation {} ('{name}'): extras: {what}", anim.index()),
        };
        let Ok(extras) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
            return Err(err("not valid JSON".into()));
        };
        let Some(events) = extras.get("events") else {
            return Ok(Vec::new());
        };
        let Some(events) = events.as_array() else {
            return Err(err("events must be an array".into()));
        };
        if events.len() > crate::layout::MAX_CLIP_EVENTS as usize {
            return Err(err(format!(
                "{} events; a clip may have {}",
                events.len(),
                crate::layout::MAX_CLIP_EVENTS
            )));
        }
        let mut out = Vec::with_capacity(events.len());
        for (k, e) in events.iter().enumerate() {
            let name = e.get("name").and_then(serde_json::Value::as_str);
            let time = e.get("time").and_then(serde_json::Value::as_f64);
            let threshold = match e.get("threshold") {
                None => Some(0.0),
                Some(t) => t.as_f64(),
            };
            let (Some(event_name), Some(time), Some(threshold)) = (name, time, threshold) else {
                return Err(err(format!(
                    "event {k} must be an object with a string \"name\", a number \"time\" and an optional number \"threshold\""
                )));
            };
            let (time, threshold) = (time as f32, threshold as f32);
            if event_name.is_empty() || !(0.0..=duration).contains(&time) || !(0.0..=1.0).contains(&threshold) {
                return Err(err(format!(
                    "event {k} ('{event_name}'): needs a name, a time in [0, {duration}] and a threshold in [0, 1]; \
                     has time {time} and threshold {threshold}"
                )));
            }
            out.push(ClipEvent {
                name: event_name.to_owned(),
                time,
                threshold,
            });
        }
        Ok(out)
    }

    /// One clip per animation and skeleton, and a summary of every animation.
    pub(super) fn animations(&mut self, skeletons: &mut [ImportedSkeleton]) -> Result<Vec<AnimationInfo>> {
        let doc = self.doc;
        let mut infos = Vec::new();
        for anim in doc.animations() {
            infos.push(self.animation(&anim, skeletons)?);
        }
        Ok(infos)
    }

    /// The clips of one animation (one per skeleton it animates; always one when there is a
    /// single skeleton) and its summary.
    fn animation(&mut self, anim: &gltf::Animation<'_>, skeletons: &mut [ImportedSkeleton]) -> Result<AnimationInfo> {
        let ai = anim.index();
        let name = anim
            .name()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("animation_{ai}"));
        let mut g = Gathered {
            tracks: vec![BTreeMap::new(); skeletons.len()],
            morph: vec![Vec::new(); skeletons.len()],
            channels: Vec::new(),
            outside: BTreeSet::new(),
            weights_channels: 0,
            first: f32::INFINITY,
            last: 0.0,
        };
        for ch in anim.channels() {
            let info = self.channel(&ch, ai, &name, skeletons, &mut g)?;
            g.channels.push(info);
        }
        let Gathered {
            mut tracks,
            mut morph,
            channels,
            outside,
            weights_channels,
            mut first,
            last,
        } = g;
        if weights_channels > 0 {
            self.notes.push(format!(
                "animation {ai} ('{name}'): {weights_channels} morph-target weight channel(s) imported as the \
                 clip's morph-weight tracks (blended per character on the GPU)"
            ));
        }
        if !outside.is_empty() {
            self.notes.push(format!(
                "animation {ai} ('{name}'): channels on node(s) {outside:?} outside every skeleton ignored"
            ));
        }
        if !first.is_finite() {
            first = 0.0;
        }
        let mut duration = last;
        if duration <= 0.0 {
            duration = 1.0 / 30.0;
            self.notes.push(format!(
                "animation {ai} ('{name}'): all keys at time 0; clip duration set to 1/30 s"
            ));
        }
        let events = self.animation_events(anim, &name, duration)?;
        let single = skeletons.len() == 1;
        for (s, sk) in skeletons.iter_mut().enumerate() {
            let t = std::mem::take(&mut tracks[s]);
            if t.is_empty() && morph[s].is_empty() && !single {
                continue;
            }
            let mut clip_name = name.clone();
            while sk.clips.iter().any(|c| c.clip.name == clip_name) {
                clip_name.push('_');
            }
            if clip_name != name {
                self.notes
                    .push(format!("animation {ai}: duplicate name '{name}' renamed '{clip_name}'"));
            }
            sk.clips.push(ImportedClip {
                animation: ai,
                clip: Clip {
                    morph_weights: std::mem::take(&mut morph[s]),
                    events: events.clone(),
                    curves: Vec::new(),
                    name: clip_name,
                    duration,
                    looping: false,
                    tracks: t.into_values().collect(),
                },
            });
        }
        Ok(AnimationInfo {
            name,
            first_key: first,
            duration: last,
            channels,
        })
    }

    /// Reads one channel into `g`: its key times, then its values as a track of every skeleton
    /// with its node, or as morph-weight tracks. Returns its summary.
    fn channel(
        &mut self,
        ch: &gltf::animation::Channel<'_>,
        ai: usize,
        name: &str,
        skeletons: &[ImportedSkeleton],
        g: &mut Gathered,
    ) -> Result<ChannelInfo> {
        let ci = ch.index();
        let node = ch.target().node().index();
        let sampler = ch.sampler();
        let interp = Self::interpolation(sampler.interpolation());
        let what = format!("animation {ai} ('{name}') channel {ci}");
        let times = self.key_times(&sampler, &what)?;
        g.first = g.first.min(times.first().copied().unwrap_or(0.0));
        g.last = g.last.max(times.last().copied().unwrap_or(0.0));
        let path = match ch.target().property() {
            Property::Translation => ChannelPath::Translation,
            Property::Rotation => ChannelPath::Rotation,
            Property::Scale => ChannelPath::Scale,
            Property::MorphTargetWeights => ChannelPath::Weights,
        };
        let mut info = ChannelInfo {
            node,
            path,
            interpolation: interp,
            keys: times.len(),
            imported: false,
        };
        info.imported = if path == ChannelPath::Weights {
            g.weights_channels += 1;
            self.weights_channel(&sampler, &info, &times, &what, skeletons, g)?
        } else {
            self.transform_channel(&sampler, &info, &times, &what, skeletons, g)?
        };
        Ok(info)
    }

    /// The key times of a sampler, checked: increasing, the first not negative.
    fn key_times(&self, sampler: &gltf::animation::Sampler<'_>, what: &str) -> Result<Vec<f32>> {
        let times: Vec<f32> = self
            .read(
                &sampler.input(),
                &Want {
                    what: format!("{what} key times"),
                    dims: Dimensions::Scalar,
                    types: FLOAT,
                },
                true,
            )?
            .into_iter()
            .map(|t| t as f32)
            .collect();
        for (k, w) in times.windows(2).enumerate() {
            if w[1] <= w[0] {
                return Err(self.err(format!(
                    "{what}: key {} time {} is not after the previous key's {}",
                    k + 1,
                    w[1],
                    w[0]
                )));
            }
        }
        if times.first().is_some_and(|&t| t < 0.0) {
            return Err(self.err(format!("{what}: negative key time")));
        }
        Ok(times)
    }

    /// A morph-target weight channel as the morph-weight tracks (one per target) of the clip of
    /// the skeleton of its node's skin, or of the only skeleton; a second weights channel for the
    /// same skeleton is ignored, with a note. Returns whether it had one.
    fn weights_channel(
        &mut self,
        sampler: &gltf::animation::Sampler<'_>,
        info: &ChannelInfo,
        times: &[f32],
        what: &str,
        skeletons: &[ImportedSkeleton],
        g: &mut Gathered,
    ) -> Result<bool> {
        let (node, interp) = (info.node, info.interpolation);
        let per_key = if interp == Interpolation::CubicSpline { 3 } else { 1 };
        // The skeleton of the node's skin, or the only one; else nowhere to go.
        let target = self.doc.nodes().nth(node).and_then(|n| n.skin()).map(|s| s.index());
        let owner = skeletons
            .iter()
            .position(|sk| target.is_some() && sk.skin == target)
            .or((skeletons.len() == 1).then_some(0));
        let Some(owner) = owner else {
            g.outside.insert(node);
            return Ok(false);
        };
        let data = self.read(
            &sampler.output(),
            &Want {
                what: format!("{what} morph-target weights"),
                dims: Dimensions::Scalar,
                types: MORPH_WEIGHT_TYPES,
            },
            true,
        )?;
        let per_time = times.len() * per_key;
        if per_time == 0 || data.len() % per_time != 0 {
            return Err(self.err(format!(
                "{what}: {} weights are not a whole number per key ({} keys)",
                data.len(),
                times.len()
            )));
        }
        let targets = data.len() / per_time;
        // glTF: as many weights per key as the node's mesh has morph targets.
        let mesh_targets = self
            .doc
            .nodes()
            .nth(node)
            .and_then(|n| n.mesh())
            .and_then(|m| m.primitives().next())
            .map_or(0, |p| p.morph_targets().count());
        if targets != mesh_targets {
            return Err(self.err(format!(
                "{what}: {targets} morph-target weights per key, and node {node}'s mesh has {mesh_targets} morph targets"
            )));
        }
        if !g.morph[owner].is_empty() {
            self.notes.push(format!(
                "{what}: a second morph-target weights channel for skeleton {owner}; ignored (a character has one weight per target of one mesh)"
            ));
            return Ok(true);
        }
        for k in 0..targets {
            // Output layout: per key, `targets` weights (cubic: in-tangents, values,
            // out-tangents, each `targets` long).
            let values = (0..times.len() * per_key)
                .map(|e| data[e * targets + k] as f32)
                .collect();
            g.morph[owner].push(Track {
                interpolation: interp,
                times: times.to_vec(),
                values,
            });
        }
        Ok(true)
    }

    /// A translation, rotation or scale channel as a track of every skeleton with its node (a
    /// second channel for the same node and property is ignored, with a note). Returns whether a
    /// skeleton took it.
    fn transform_channel(
        &mut self,
        sampler: &gltf::animation::Sampler<'_>,
        info: &ChannelInfo,
        times: &[f32],
        what: &str,
        skeletons: &[ImportedSkeleton],
        g: &mut Gathered,
    ) -> Result<bool> {
        let (node, path, interp) = (info.node, info.path, info.interpolation);
        let per_key = if interp == Interpolation::CubicSpline { 3 } else { 1 };
        let owners: Vec<(usize, usize)> = skeletons
            .iter()
            .enumerate()
            .filter_map(|(s, sk)| sk.joint_of_node(node).map(|j| (s, j)))
            .collect();
        if owners.is_empty() {
            g.outside.insert(node);
            return Ok(false);
        }
        let out = sampler.output();
        let (dims, types) = match path {
            ChannelPath::Rotation => (Dimensions::Vec4, ROTATION_TYPES),
            _ => (Dimensions::Vec3, FLOAT),
        };
        let data = self.read(
            &out,
            &Want {
                what: format!("{what} {path} values"),
                dims,
                types,
            },
            true,
        )?;
        let n = dims_count(dims);
        if data.len() / n != times.len() * per_key {
            return Err(self.err(format!(
                "{what}: {} keys need {} {path} values, found {}",
                times.len(),
                times.len() * per_key,
                data.len() / n
            )));
        }
        let mut imported = false;
        for (s, j) in owners {
            let joint = skeletons[s].skeleton.joint_names()[j].clone();
            let jt = g.tracks[s].entry(node).or_insert_with(|| JointTrack {
                joint,
                ..Default::default()
            });
            let dup = match path {
                ChannelPath::Translation | ChannelPath::Scale => {
                    let track = Track {
                        interpolation: interp,
                        times: times.to_vec(),
                        values: data
                            .chunks_exact(3)
                            .map(|c| Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32))
                            .collect(),
                    };
                    let slot = if path == ChannelPath::Translation {
                        &mut jt.translation
                    } else {
                        &mut jt.scale
                    };
                    if slot.is_some() {
                        true
                    } else {
                        *slot = Some(track);
                        false
                    }
                }
                _ => {
                    let track = Track {
                        interpolation: interp,
                        times: times.to_vec(),
                        values: data
                            .chunks_exact(4)
                            .map(|c| Quat::from_xyzw(c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32))
                            .collect(),
                    };
                    if jt.rotation.is_some() {
                        true
                    } else {
                        jt.rotation = Some(track);
                        false
                    }
                }
            };
            if dup {
                self.notes
                    .push(format!("{what}: a second {path} channel for node {node}; ignored"));
            } else {
                imported = true;
            }
        }
        Ok(imported)
    }
}

/// What the channels of one animation gather, per skeleton, before its clips are made.
struct Gathered {
    /// Per skeleton: node → track.
    tracks: Vec<BTreeMap<usize, JointTrack>>,
    /// Per skeleton: the morph-weight tracks of its (first) weights channel, one per target.
    morph: Vec<Vec<Track<f32>>>,
    /// A summary of each channel, in file order.
    channels: Vec<ChannelInfo>,
    /// The nodes of channels outside every skeleton.
    outside: BTreeSet<usize>,
    /// How many channels are morph-target weights.
    weights_channels: usize,
    /// The earliest key time.
    first: f32,
    /// The last key time.
    last: f32,
}
