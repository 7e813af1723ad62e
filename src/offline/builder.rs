//! [`LibraryBuilder`]: authoring data ([`Skeleton`], [`Clip`], compressed clips, blend trees,
//! masks, root motion) validated and packed into an [`AnimationLibrary`], the runtime form.
//! Every `add_*` validates everything before it packs, so an error leaves the library as it was.

use crate::clip::{Clip, ClipId, Interpolation, Track};
use crate::error::{Channel, Error, Result};
use crate::layout::{
    CLIP_CURVE_SHIFT, CLIP_MORPH_SHIFT, GpuClip, GpuEvent, GpuSkeleton, GpuSocket, GpuTrack, INTERP_PACKED, MAX_CURVES,
    MAX_SOCKETS, NO_ROOT_MOTION, packed_track_ref,
};
use crate::library::{AnimationLibrary, MaskId, MaskInfo, SkeletonId};
use crate::math::Affine;
use crate::reach::{self, Extent};
use crate::skeleton::Skeleton;
use glam::{Quat, Vec3, Vec4};
use std::collections::HashMap;

/// Collects skeletons and clips, validating each as it is added.
///
/// Each builder is a new library: it takes a new [`LibraryTag`](crate::id::LibraryTag) when it
/// is made (or cloned), the ids it hands out carry it, and its `add_*` methods refuse ids of
/// another builder or library ([`Error::ForeignId`]). Building the same input twice makes two
/// libraries whose ids are not interchangeable.
#[derive(Default)]
pub struct LibraryBuilder {
    lib: AnimationLibrary,
    compression: Option<super::compress::CompressionSettings>,
}

/// A copy that is a new library: its own tag, so the ids the original handed out are refused
/// by it (look them up again: by name, or with [`AnimationLibrary::skeleton_at`] and the like
/// once built).
impl Clone for LibraryBuilder {
    fn clone(&self) -> Self {
        let mut copy = self.clone_with_tag();
        copy.lib.retag();
        copy
    }
}

/// Appends a compressed clip's blob to the library's packed words at a multiple of
/// [`crate::library::PACKED_BLOB_ALIGN`] words (zeros before it); returns its first word.
fn append_blob(packed: &mut Vec<u32>, blob: &[u32]) -> u32 {
    packed.resize(packed.len().next_multiple_of(crate::library::PACKED_BLOB_ALIGN), 0);
    let start = packed.len() as u32;
    packed.extend_from_slice(blob);
    start
}

impl LibraryBuilder {
    /// An empty library with a new tag.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The tag of the library it builds, which every id it hands out carries.
    #[must_use]
    pub fn tag(&self) -> crate::id::LibraryTag {
        self.lib.tag
    }

    /// A copy with the same tag: for an attempt that replaces the builder on success.
    pub(crate) fn clone_with_tag(&self) -> Self {
        Self {
            lib: self.lib.clone(),
            compression: self.compression,
        }
    }

    /// Adds a skeleton.
    pub fn add_skeleton(&mut self, skeleton: Skeleton) -> SkeletonId {
        let lib = &mut self.lib;
        let id = SkeletonId::new(lib.skeletons.len() as u32, lib.tag);
        lib.gpu_skeletons.push(GpuSkeleton {
            joint_count: skeleton.joint_count() as u32,
            joint_offset: lib.parents.len() as u32,
            rest_offset: lib.values.len() as u32,
            socket_count: skeleton.sockets().len() as u32,
        });
        let mut sockets = [<GpuSocket as bytemuck::Zeroable>::zeroed(); MAX_SOCKETS as usize];
        for (slot, socket) in sockets.iter_mut().zip(skeleton.sockets()) {
            *slot = GpuSocket {
                joint: socket.joint as u32,
                _pad: [0; 3],
                offset: Affine::from_mat4(&socket.offset.to_mat4()),
            };
        }
        lib.sockets.extend(sockets);
        lib.ik_chains.extend(gpu_ik_chains(&skeleton));
        // The rest pose, read when a blend's total weight is too small to stand alone.
        for r in skeleton.rest_pose() {
            lib.values
                .extend([r.translation.extend(0.0), Vec4::from(r.rotation), r.scale.extend(0.0)]);
        }
        lib.parents
            .extend(skeleton.parents().iter().map(|p| p.map_or(-1, |p| p as i32)));
        lib.levels.extend(fused_levels(&skeleton));
        lib.inverse_binds
            .extend(skeleton.inverse_binds().iter().map(Affine::from_mat4));
        lib.skeleton_extents.push(skeleton.rest_extents());
        lib.skeleton_morph_targets.push(0);
        lib.retargets.push(None);
        lib.has_scale |= skeleton.rest_pose().iter().any(|r| scales(r.scale))
            || skeleton
                .inverse_binds()
                .iter()
                .any(|m| !is_rotation(&glam::Mat3::from_mat4(*m)));
        lib.skeletons.push(skeleton);
        id
    }

    /// The skeleton added as `id`.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another builder or library issued `id`.
    pub fn skeleton(&self, id: SkeletonId) -> Result<&Skeleton> {
        let index = id.check(self.lib.tag)?;
        self.lib.skeletons.get(index as usize).ok_or_else(|| Error::Limit {
            what: format!("skeleton {index} does not exist"),
        })
    }

    /// Validates `clip` against skeleton `skeleton` and packs it. On error nothing is added.
    ///
    /// Errors: a skeleton of another builder or library ([`Error::ForeignId`]); a duplicate clip
    /// name for the skeleton; a duration that is not
    /// finite and positive; a track for a joint the skeleton lacks, or two for one joint; a track
    /// with no keys, non-finite or negative or unsorted key times, a value count that does not
    /// match, non-finite values, or a zero-length rotation; more than [`MAX_CLIP_EVENTS`](crate::layout::MAX_CLIP_EVENTS) events,
    /// an event with an empty name, a time outside `[0, duration]` or a threshold outside
    /// `[0, 1]`.
    ///
    /// With [`LibraryBuilder::set_compression`] on, the clip is compressed first
    /// ([`compress`](super::compress::compress)) and its report kept
    /// ([`AnimationLibrary::compression_reports`]).
    pub fn add_clip(&mut self, skeleton: SkeletonId, clip: &Clip) -> Result<ClipId> {
        if let Some(settings) = self.compression {
            let skel = self.skeleton_for(skeleton, &clip.name)?;
            let (compressed, report) = super::compress::compress(skel, clip, &settings)?;
            let id = self.add_compressed_clip(skeleton, &compressed)?;
            self.lib.reports.push((id, report));
            return Ok(id);
        }
        self.add_clip_packed(skeleton, clip, None)
    }

    /// Compresses every clip added after this with `settings` (`None`: clips stay raw, the
    /// default). Raw and compressed clips play side by side.
    pub fn set_compression(&mut self, settings: Option<super::compress::CompressionSettings>) {
        self.compression = settings;
    }

    /// Checks a compressed clip ([`compress`](super::compress::compress), [`read`](super::compressed_file::read))
    /// against skeleton `skeleton` and adds it. On error nothing is added.
    ///
    /// Errors: as [`LibraryBuilder::add_clip`] for its raw part; a malformed blob; a packed
    /// channel of a joint the skeleton lacks, or one the clip also has raw.
    pub fn add_compressed_clip(&mut self, skeleton: SkeletonId, clip: &crate::codec::CompressedClip) -> Result<ClipId> {
        let cerr = |what: String| Error::Clip {
            clip: clip.clip.name.clone(),
            what,
        };
        let skel = self.skeleton_for(skeleton, &clip.clip.name)?;
        crate::codec::check_blob(clip).map_err(cerr)?;
        for p in &clip.packed {
            let Some(name) = skel.joint_names().get(p.joint as usize) else {
                return Err(cerr(format!(
                    "packs joint {}; skeleton '{}' has {}",
                    p.joint,
                    skel.name(),
                    skel.joint_count()
                )));
            };
            let raw = clip.clip.tracks.iter().any(|t| t.joint == *name && t.has(p.channel));
            if raw {
                return Err(cerr(format!("joint '{name}' {} is both packed and raw", p.channel)));
            }
        }
        self.add_clip_packed(skeleton, &clip.clip, Some(clip))
    }

    /// Skeleton `skeleton`, for clip `clip`: [`Error::ForeignId`] when another builder or
    /// library issued it, an error naming the clip where it does not exist.
    fn skeleton_for(&self, skeleton: SkeletonId, clip: &str) -> Result<&Skeleton> {
        let index = skeleton.check(self.lib.tag)?;
        self.lib.skeletons.get(index as usize).ok_or_else(|| Error::Clip {
            clip: clip.to_string(),
            what: format!("skeleton {index} does not exist"),
        })
    }

    fn add_clip_packed(
        &mut self,
        skeleton: SkeletonId,
        clip: &Clip,
        compressed: Option<&crate::codec::CompressedClip>,
    ) -> Result<ClipId> {
        let cerr = |what: String| Error::Clip {
            clip: clip.name.clone(),
            what,
        };
        let skel = self.skeleton_for(skeleton, &clip.name)?;
        if let Some(r) = self.lib.retarget_at(skeleton.index()) {
            return Err(cerr(format!(
                "skeleton '{}' plays the clips of skeleton '{}' through a retarget and has none of its own: add the clip to '{}'",
                skel.name(),
                self.lib.skeletons[r.source as usize].name(),
                self.lib.skeletons[r.source as usize].name()
            )));
        }
        if self.lib.find_clip(skeleton.index(), &clip.name).is_some() {
            return Err(cerr(format!(
                "skeleton '{}' already has a clip of that name",
                skel.name()
            )));
        }
        // Validate everything before packing so an error leaves the library unchanged.
        let (packed, curves, morph) = pack_clip(skel, clip)?;
        let extents = clip_extents(&packed, compressed);
        let skeleton_extents: Vec<Extent> = self.lib.skeleton_extents[skeleton.index() as usize]
            .iter()
            .zip(&extents)
            .map(|(a, b)| a.max(*b))
            .collect();
        skel.reach(&skeleton_extents, &[]).map_err(|(j, what)| Error::Clip {
            clip: clip.name.clone(),
            what: format!("joint '{}': {what}", skel.joint_names()[j]),
        })?;
        let retargeted = self
            .retargeted_from(skeleton.index(), &skeleton_extents)
            .map_err(cerr)?;
        let new_names = curves
            .iter()
            .filter(|(name, _)| !self.lib.curve_names.contains(name))
            .count();
        if self.lib.curve_names.len() + new_names > MAX_CURVES as usize {
            return Err(cerr(format!(
                "its curves would make {} curve names; a library may have {MAX_CURVES}",
                self.lib.curve_names.len() + new_names
            )));
        }
        let n = skel.joint_count();
        let lib = &mut self.lib;
        // The clip's curves in name order, after its joints' tracks.
        let mut curves: Vec<(u32, PackedTrack)> = curves
            .into_iter()
            .map(|(name, track)| {
                let id = match lib.curve_names.iter().position(|n| *n == name) {
                    Some(k) => k,
                    None => {
                        lib.curve_names.push(name);
                        lib.curve_names.len() - 1
                    }
                };
                (id as u32, track)
            })
            .collect();
        curves.sort_by_key(|(id, _)| *id);
        let curve_mask = curves.iter().fold(0u32, |m, (id, _)| m | 1 << id);
        let id = ClipId::new(lib.clips.len() as u32, lib.tag);
        let mut events = clip.events.clone();
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        lib.clips.push(GpuClip {
            skeleton: skeleton.index(),
            joint_count: n as u32,
            track_offset: lib.tracks.len() as u32,
            flags: u32::from(clip.looping) | curve_mask << CLIP_CURVE_SHIFT | (morph.len() as u32) << CLIP_MORPH_SHIFT,
            duration: clip.duration,
            event_offset: lib.events.len() as u32,
            event_count: events.len() as u32,
            root_track: NO_ROOT_MOTION,
        });
        push_events(lib, events);
        lib.clip_names.push(clip.name.clone());
        lib.clip_extents.push(extents);
        lib.has_scale |= clip.tracks.iter().filter_map(|t| t.scale.as_ref()).any(track_scales)
            || compressed.is_some_and(|c| c.packed.iter().any(|p| p.channel == Channel::Scale));
        lib.skeleton_extents[skeleton.index() as usize] = skeleton_extents;
        for (k, extents) in retargeted {
            lib.skeleton_extents[k] = extents;
        }
        let driven = &mut lib.skeleton_morph_targets[skeleton.index() as usize];
        *driven = (*driven).max(morph.len() as u32);
        let mut time_arrays: HashMap<Vec<u32>, u32> = HashMap::new();
        // A compressed clip's packed channels: track 3 j + c of the clip reads blob track k.
        let mut packed_track: HashMap<usize, u32> = HashMap::new();
        let mut blob_start = 0;
        if let Some(c) = compressed.filter(|c| !c.packed.is_empty()) {
            for (k, p) in c.packed.iter().enumerate() {
                packed_track.insert(3 * p.joint as usize + p.channel.index() as usize, k as u32);
            }
            blob_start = append_blob(&mut lib.packed, &c.blob);
        }
        // The blob's frame count, track count and segment size (checked by `check_blob`).
        let (frame_count, blob_tracks, segment_frames) = compressed
            .filter(|c| c.blob.len() >= 4)
            .map_or((0, 0, 1), |c| (c.blob[0], c.blob[2], c.blob[3]));
        let curve_tracks = curves.into_iter().map(|(_, t)| t);
        let mut index = 0usize;
        for tracks in packed
            .into_iter()
            .map(Vec::from)
            .chain(std::iter::once(curve_tracks.collect()))
            .chain(std::iter::once(morph))
        {
            for t in tracks {
                index += 1;
                if t.times.is_empty() {
                    // A morph-weight track that drives nothing: no keys.
                    lib.tracks.push(GpuTrack::default());
                    continue;
                }
                if let Some(&k) = packed_track.get(&(index - 1)) {
                    lib.tracks.push(GpuTrack {
                        time_offset: blob_start,
                        key_count: frame_count,
                        value_offset: packed_track_ref(k, blob_tracks, segment_frames.trailing_zeros()),
                        interpolation: INTERP_PACKED,
                    });
                    continue;
                }
                let key: Vec<u32> = t.times.iter().map(|x| x.to_bits()).collect();
                let time_offset = *time_arrays.entry(key).or_insert_with(|| {
                    let o = lib.times.len() as u32;
                    lib.times.extend_from_slice(&t.times);
                    o
                });
                lib.tracks.push(GpuTrack {
                    time_offset,
                    key_count: t.times.len() as u32,
                    value_offset: lib.values.len() as u32,
                    interpolation: t.interpolation.gpu_code(),
                });
                lib.values.extend_from_slice(&t.values);
            }
        }
        Ok(id)
    }

    /// Extracts root motion from `clip` ([`super::root_motion::extract`]) and adds the clip in
    /// place with its root track: played by a character with root motion on
    /// ([`crate::gpu::Controller::set_root_motion`]), the clip moves the character on the GPU. On error
    /// nothing is added.
    ///
    /// Errors: as [`LibraryBuilder::add_clip`]; a root joint the skeleton lacks.
    pub fn add_clip_with_root_motion(
        &mut self,
        skeleton: SkeletonId,
        clip: &Clip,
        motion: &super::root_motion::RootMotion,
    ) -> Result<ClipId> {
        let skel = self.skeleton_for(skeleton, &clip.name)?;
        let (in_place, root) = super::root_motion::extract(skel, clip, motion)?;
        let terr = |channel, what: String| Error::Track {
            clip: clip.name.clone(),
            joint: "(root motion)".into(),
            channel,
            what,
        };
        let (translation, rotation) = (root.translation_track(), root.rotation_track());
        translation.check_vectors().map_err(|e| terr(Channel::Translation, e))?;
        rotation.check_rotations().map_err(|e| terr(Channel::Rotation, e))?;
        let translation = pack_track(Some(&translation), Vec3::ZERO);
        let rotation = pack_rotation(Some(&rotation), Quat::IDENTITY);
        let id = self.add_clip(skeleton, &in_place)?;
        let lib = &mut self.lib;
        lib.clips[id.index() as usize].root_track = lib.tracks.len() as u32;
        for t in [translation, rotation] {
            lib.tracks.push(GpuTrack {
                time_offset: lib.times.len() as u32,
                key_count: t.times.len() as u32,
                value_offset: lib.values.len() as u32,
                interpolation: t.interpolation.gpu_code(),
            });
            lib.times.extend_from_slice(&t.times);
            lib.values.extend_from_slice(&t.values);
        }
        Ok(id)
    }

    /// Validates a blend tree over this library's clips and adds it. On error nothing is added.
    ///
    /// Errors: as [`BlendLibrary::add_tree`](crate::blend::BlendLibrary::add_tree), among them a
    /// clip of another builder or library.
    pub fn add_blend_tree(&mut self, tree: &crate::blend::BlendTree) -> Result<crate::blend::BlendTreeId> {
        let names: Vec<&str> = self.lib.skeletons.iter().map(Skeleton::name).collect();
        let catalog = crate::blend::ClipCatalog {
            library: self.lib.tag,
            clips: &self.lib.clips,
            clip_names: &self.lib.clip_names,
            skeleton_names: &names,
        };
        self.lib.blend.add_tree(&catalog, tree)
    }

    /// Validates state machine `machine` over `skeleton`'s clips and this library's blend trees
    /// (add them first) and adds it ([`crate::machine`]). On error nothing is added.
    ///
    /// Errors: a skeleton of another builder or library ([`Error::ForeignId`]); what the
    /// state-machine reference refuses, and what cannot be bound (an unknown clip, tree, state or
    /// parameter, a duplicate name, too many parameters), as [`Error::Machine`] naming the machine
    /// and the transition, state or parameter.
    pub fn add_state_machine(
        &mut self,
        skeleton: SkeletonId,
        machine: &crate::machine::StateMachine,
    ) -> Result<crate::machine::MachineId> {
        let s = skeleton.check(self.lib.tag)?;
        let catalog = crate::machine::MotionCatalog {
            clips: &self.lib.clips,
            clip_names: &self.lib.clip_names,
            trees: &self.lib.blend,
        };
        self.lib.machines.add(&catalog, s, machine)
    }

    /// Adds a mask: one weight in [0, 1] per joint of `skeleton` (see [`super::layers`] for helpers
    /// that build one from a joint and a blend depth, or from a list of joints).
    ///
    /// Errors: a skeleton of another builder or library ([`Error::ForeignId`]), a weight count
    /// that is not the joint count, a weight outside [0, 1] or not finite, a duplicate name.
    pub fn add_mask(&mut self, skeleton: SkeletonId, name: &str, weights: &[f32]) -> Result<MaskId> {
        self.add_mask_with_targets(skeleton, name, weights, &[])
    }

    /// As [`LibraryBuilder::add_mask`], and over morph targets too: a layer with this mask
    /// weighs morph target `t`'s weight track by `targets[t]` (targets past the list by 1), as it
    /// weighs joint `j` by `weights[j]` — a face layer that moves only the mouth's targets, say.
    ///
    /// Errors: as [`LibraryBuilder::add_mask`]; a target weight outside [0, 1] or not finite.
    pub fn add_mask_with_targets(
        &mut self,
        skeleton: SkeletonId,
        name: &str,
        weights: &[f32],
        targets: &[f32],
    ) -> Result<MaskId> {
        let err = |what: String| Error::Clip {
            clip: format!("mask {name}"),
            what,
        };
        let skel = self.skeleton_for(skeleton, &format!("mask {name}"))?;
        if weights.len() != skel.joint_count() {
            return Err(err(format!(
                "{} weights for skeleton '{}' of {} joints",
                weights.len(),
                skel.name(),
                skel.joint_count()
            )));
        }
        if let Some(j) = weights.iter().position(|w| !(0.0..=1.0).contains(w)) {
            return Err(err(format!(
                "joint '{}' has weight {}, outside [0, 1]",
                skel.joint_names()[j],
                weights[j]
            )));
        }
        if let Some(t) = targets.iter().position(|w| !(0.0..=1.0).contains(w)) {
            return Err(err(format!(
                "morph target {t} has weight {}, outside [0, 1]",
                targets[t]
            )));
        }
        if self.lib.mask_names.iter().any(|n| n == name) {
            return Err(err("a mask of that name exists already".into()));
        }
        let lib = &mut self.lib;
        let id = MaskId::new(lib.masks.len() as u32, lib.tag);
        lib.masks.push(MaskInfo {
            skeleton: skeleton.index(),
            offset: lib.values.len() as u32,
        });
        lib.mask_names.push(name.to_string());
        // Entry k: joint k's weight (x), morph target k's (y); entry 0's z holds the number of
        // target weights (the shaders' `mask_target_weight`).
        let entries = weights.len().max(targets.len());
        lib.values.extend((0..entries).map(|k| {
            Vec4::new(
                weights.get(k).copied().unwrap_or(0.0),
                targets.get(k).copied().unwrap_or(1.0),
                if k == 0 { targets.len() as f32 } else { 0.0 },
                0.0,
            )
        }));
        Ok(id)
    }

    /// The finished library.
    #[must_use]
    pub fn build(mut self) -> AnimationLibrary {
        self.lib.clip_key_tracks = self.lib.find_clip_key_tracks();
        self.lib
    }
}

/// Appends a clip's `events` (sorted by time) to the library's, each name once in its names.
fn push_events(lib: &mut AnimationLibrary, events: Vec<crate::clip::ClipEvent>) {
    for e in events {
        let name = match lib.event_names.iter().position(|n| *n == e.name) {
            Some(k) => k,
            None => {
                lib.event_names.push(e.name.clone());
                lib.event_names.len() - 1
            }
        };
        lib.events.push(GpuEvent {
            time: e.time,
            name: name as u32,
            threshold: e.threshold,
            _pad: 0,
        });
    }
}

/// Checks `clip` against `skel` ([`Clip::validate`]) and packs its tracks, three per joint
/// (missing channels hold the rest pose), and its float curves, each with its name (values in x).
fn pack_clip(skel: &Skeleton, clip: &Clip) -> Result<PackedClip> {
    let by_joint = clip.validated_tracks(skel)?;
    let joints = by_joint
        .iter()
        .zip(skel.rest_pose())
        .map(|(jt, rest)| {
            [
                pack_track(jt.and_then(|t| t.translation.as_ref()), rest.translation),
                pack_rotation(jt.and_then(|t| t.rotation.as_ref()), rest.rotation),
                pack_track(jt.and_then(|t| t.scale.as_ref()), rest.scale),
            ]
        })
        .collect();
    let scalar = |t: &crate::clip::Track<f32>| {
        let values = t.values.iter().map(|&v| Vec4::new(v, 0.0, 0.0, 0.0)).collect();
        collapse(t.interpolation, t.times.clone(), values)
    };
    let curves = clip.curves.iter().map(|c| (c.name.clone(), scalar(&c.track))).collect();
    // Up to the last track with keys: trailing tracks without drive nothing and are not counted.
    let driven = clip
        .morph_weights
        .iter()
        .rposition(|t| !t.times.is_empty())
        .map_or(0, |last| last + 1);
    let morph = clip.morph_weights[..driven]
        .iter()
        .map(|t| {
            if t.times.is_empty() {
                PackedTrack {
                    interpolation: Interpolation::Step,
                    times: Vec::new(),
                    values: Vec::new(),
                }
            } else {
                scalar(t)
            }
        })
        .collect();
    Ok((joints, curves, morph))
}

/// Each joint's extent over the keys of `packed` (a clip's tracks as the library stores them),
/// and for the channels of `compressed` in its blob, over the values the blob can decode: within
/// `[min, min + 2 · extent]` of the track's clip range (a segment's range starts and spans up to
/// 255 255ths of it).
fn clip_extents(packed: &[[PackedTrack; 3]], compressed: Option<&crate::codec::CompressedClip>) -> Vec<Extent> {
    let mut extents: Vec<Extent> = packed
        .iter()
        .map(|[t, _, s]| {
            let cubic = |p: &PackedTrack| p.interpolation == Interpolation::CubicSpline;
            Extent {
                translation: reach::translation_reach(cubic(t), &t.times, &t.values),
                scale: reach::scale_reach(cubic(s), &s.times, &s.values),
            }
        })
        .collect();
    let Some(c) = compressed else { return extents };
    let Ok(blob) = crate::codec::format::Blob::parse(&c.blob) else {
        return extents;
    };
    for (k, p) in c.packed.iter().enumerate() {
        let corner = |c: u32| {
            let (min, extent) = blob.clip_range(k as u32, c);
            let (min, extent) = (f64::from(min), f64::from(extent));
            min.abs().max((min + 2.0 * extent).abs())
        };
        let Some(e) = extents.get_mut(p.joint as usize) else {
            continue;
        };
        match p.channel {
            Channel::Translation => {
                e.translation = (0..3).map(|c| corner(c).powi(2)).sum::<f64>().sqrt();
            }
            Channel::Scale => e.scale = (0..3).map(corner).fold(0.0, f64::max),
            Channel::Rotation => {}
        }
    }
    extents
}

/// A clip's tracks as the library stores them: three per joint, then its named curves, then its
/// morph-weight tracks by target (those without keys drive nothing).
type PackedClip = (Vec<[PackedTrack; 3]>, Vec<(String, PackedTrack)>, Vec<PackedTrack>);

/// A track as the library stores it.
struct PackedTrack {
    interpolation: Interpolation,
    times: Vec<f32>,
    values: Vec<Vec4>,
}

/// A track whose every key holds one value is stored once, as a single step key.
fn collapse(interpolation: Interpolation, times: Vec<f32>, values: Vec<Vec4>) -> PackedTrack {
    let constant = match interpolation {
        Interpolation::CubicSpline => values
            .chunks_exact(3)
            .all(|k| k[0] == Vec4::ZERO && k[2] == Vec4::ZERO && k[1] == values[1]),
        _ => values.iter().all(|v| *v == values[0]),
    };
    if constant {
        let v = if interpolation == Interpolation::CubicSpline {
            values[1]
        } else {
            values[0]
        };
        return PackedTrack {
            interpolation: Interpolation::Step,
            times: vec![0.0],
            values: vec![v],
        };
    }
    PackedTrack {
        interpolation,
        times,
        values,
    }
}

/// A translation or scale track (checked: [`Track::check_vectors`]), or `rest` when there is none.
fn pack_track(track: Option<&Track<Vec3>>, rest: Vec3) -> PackedTrack {
    let Some(track) = track else {
        return collapse(Interpolation::Step, vec![0.0], vec![rest.extend(0.0)]);
    };
    collapse(
        track.interpolation,
        track.times.clone(),
        track.values.iter().map(|v| v.extend(0.0)).collect(),
    )
}

/// A rotation track (checked: [`Track::check_rotations`]), its key values normalized, or `rest`
/// when there is none.
fn pack_rotation(track: Option<&Track<Quat>>, rest: Quat) -> PackedTrack {
    let Some(track) = track else {
        return collapse(Interpolation::Step, vec![0.0], vec![Vec4::from(rest)]);
    };
    let cubic = track.interpolation == Interpolation::CubicSpline;
    let values = track
        .values
        .iter()
        .enumerate()
        .map(|(k, q)| {
            if !cubic || k % 3 == 1 {
                // In f64: the length of a quaternion of components near f32::MAX overflows f32.
                let q = Vec4::from(*q).as_dvec4();
                (q / q.length()).as_vec4()
            } else {
                Vec4::from(*q) // tangents are not normalized
            }
        })
        .collect();
    collapse(track.interpolation, track.times.clone(), values)
}

/// A scale more than [`SCALE_TOLERANCE`](crate::library::SCALE_TOLERANCE) from 1 on some axis
/// (for [`AnimationLibrary::has_scale`]).
fn scales(s: glam::Vec3) -> bool {
    !s.abs_diff_eq(glam::Vec3::ONE, crate::library::SCALE_TOLERANCE)
}

/// Whether scale track `t` leaves 1 anywhere: a key more than
/// [`SCALE_TOLERANCE`](crate::library::SCALE_TOLERANCE) from it, or, on a cubic spline, a tangent
/// more than that from 0 (the spline then swings between its keys).
fn track_scales(t: &Track<Vec3>) -> bool {
    let tol = crate::library::SCALE_TOLERANCE;
    if t.interpolation == Interpolation::CubicSpline {
        // Per key: in-tangent, value, out-tangent.
        return t.values.iter().enumerate().any(|(k, v)| {
            if k % 3 == 1 {
                scales(*v)
            } else {
                !v.abs_diff_eq(Vec3::ZERO, tol)
            }
        });
    }
    t.values.iter().copied().any(scales)
}

/// A rotation within [`SCALE_TOLERANCE`](crate::library::SCALE_TOLERANCE): orthonormal, not
/// mirrored.
fn is_rotation(m: &glam::Mat3) -> bool {
    let tol = crate::library::SCALE_TOLERANCE;
    (*m * m.transpose()).abs_diff_eq(glam::Mat3::IDENTITY, 2.0 * tol) && m.determinant() > 0.0
}

/// A skeleton's IK chains as the GPU reads them: [`crate::layout::MAX_IK_CHAINS`] slots, those
/// past its chains of kind `NONE`.
fn gpu_ik_chains(skeleton: &Skeleton) -> [crate::layout::GpuIkChain; crate::ik::MAX_IK_CHAINS] {
    use crate::ik::IkKind;
    use crate::layout::{GpuIkChain, NO_JOINT, ik_kind};
    let mut out = [GpuIkChain::default(); crate::ik::MAX_IK_CHAINS];
    for (slot, chain) in out.iter_mut().zip(skeleton.ik_chains()) {
        *slot = match &chain.kind {
            IkKind::TwoBone(c) => GpuIkChain {
                kind: ik_kind::TWO_BONE,
                joint_count: 3,
                pelvis: c.pelvis.map_or(NO_JOINT, |p| p as u32),
                joints: glam::UVec4::new(c.start as u32, c.mid as u32, c.end as u32, NO_JOINT),
                axis: c.mid_axis,
                ratio: c.soften,
                pole: c.pole,
                twist: c.twist,
                ..GpuIkChain::default()
            },
            IkKind::Aim(c) => {
                let mut joints = [NO_JOINT; 4];
                for (j, &k) in joints.iter_mut().zip(&c.joints) {
                    *j = k as u32;
                }
                GpuIkChain {
                    kind: ik_kind::AIM,
                    joint_count: c.joints.len() as u32,
                    pelvis: NO_JOINT,
                    joints: glam::UVec4::from_array(joints),
                    axis: c.forward,
                    ratio: c.joint_weight,
                    pole: c.pole,
                    twist: c.twist,
                    offset: c.offset,
                    up: c.up,
                    ..GpuIkChain::default()
                }
            }
        };
    }
    out
}

/// The hierarchy levels of `skeleton` for the library ([`AnimationLibrary::levels`]): entry `k`
/// of its first `min(joint_count, MAX_FUSED_JOINTS)` holds the `k`-th of those joints in depth
/// order, its depth, and where level `k` starts in that order (their count past the last level),
/// a byte each; entries past them are zero.
fn fused_levels(skeleton: &Skeleton) -> Vec<u32> {
    let n = skeleton.joint_count();
    let fused = n.min(crate::layout::MAX_FUSED_JOINTS as usize);
    let depths = skeleton.depths();
    // Parents come before their children, so the first joints are whole subtrees.
    let order: Vec<u32> = skeleton
        .depth_order()
        .into_iter()
        .filter(|&j| (j as usize) < fused)
        .collect();
    let start = |level: u32| order.iter().position(|&j| depths[j as usize] >= level).unwrap_or(fused) as u32;
    let mut levels: Vec<u32> = order
        .iter()
        .enumerate()
        .map(|(k, &j)| j | depths[j as usize] << 8 | start(k as u32) << 16)
        .collect();
    levels.resize(n, 0);
    levels
}

mod retarget;
#[cfg(test)]
mod tests;
