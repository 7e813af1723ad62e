//! The runtime clip library: skeletons and clips validated and packed into flat arrays, exactly the
//! bytes the GPU reads (and the CPU mirror reads too). [`LibraryBuilder`] joins the authoring types
//! ([`Skeleton`], [`Clip`]) to this runtime form.

use crate::clip::{Clip, Interpolation, Track};
use crate::error::{Channel, Error, Result};
use crate::layout::{
    CLIP_CURVE_SHIFT, GpuClip, GpuEvent, GpuSkeleton, GpuSocket, GpuTrack, INTERP_PACKED, MAX_CLIP_EVENTS, MAX_CURVES,
    MAX_SOCKETS, NO_ROOT_MOTION, packed_track_ref,
};
use crate::math::Affine;
use crate::skeleton::Skeleton;
use glam::{Quat, Vec3, Vec4};
use std::collections::HashMap;

/// Index of a skeleton in a library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SkeletonId(pub u32);

/// Index of a mask (per-joint layer weights) in a library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MaskId(pub u32);

/// Where a mask lives: its skeleton, and the first of its per-joint weights in `values` (x).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskInfo {
    /// The skeleton it was built for.
    pub skeleton: u32,
    /// First entry in `values`.
    pub offset: u32,
}

pub use crate::clip::ClipId;

/// Collects skeletons and clips, validating each as it is added.
#[derive(Clone, Default)]
pub struct LibraryBuilder {
    lib: AnimationLibrary,
    compression: Option<crate::codec::CompressionSettings>,
}

/// Skeletons and clips in runtime form. Build one with [`LibraryBuilder`], which validates every
/// index, key and name; the library is read-only after that (its arrays through accessors of the
/// same names), so a built library is always a valid one:
///
/// ```
/// let (library, _, _) = wgpu_anim::mannequin::library();
/// assert!(!library.clips().is_empty());
/// ```
/// ```compile_fail,E0616
/// let (mut library, _, _) = wgpu_anim::mannequin::library();
/// library.clips.clear(); // error[E0616]: field `clips` of struct `AnimationLibrary` is private
/// ```
#[derive(Clone, Debug, Default)]
pub struct AnimationLibrary {
    /// Authoring skeletons (names, rest pose), by [`SkeletonId`].
    skeletons: Vec<Skeleton>,
    /// Clip names, by [`ClipId`].
    clip_names: Vec<String>,
    /// Per skeleton: where its joints live in `parents` and `inverse_binds`.
    gpu_skeletons: Vec<GpuSkeleton>,
    /// Parent of each joint, relative to its skeleton; -1 for roots.
    parents: Vec<i32>,
    /// Inverse bind matrices.
    inverse_binds: Vec<Affine>,
    /// [`MAX_SOCKETS`] per skeleton, the first `GpuSkeleton::socket_count` in use.
    sockets: Vec<GpuSocket>,
    /// Per clip: skeleton, duration, tracks.
    clips: Vec<GpuClip>,
    /// Three tracks (translation, rotation, scale) per joint per clip.
    tracks: Vec<GpuTrack>,
    /// Key times of all tracks.
    times: Vec<f32>,
    /// Key values of all tracks: translation and scale in xyz, rotations as (x, y, z, w); also
    /// every skeleton's rest pose (see `GpuSkeleton::rest_offset`).
    values: Vec<Vec4>,
    /// Blend trees over these clips.
    blend: crate::blend::BlendLibrary,
    /// Masks, by [`MaskId`].
    masks: Vec<MaskInfo>,
    /// Mask names, by [`MaskId`].
    mask_names: Vec<String>,
    /// Every clip's events, each clip's sorted by time (`GpuClip::event_offset`).
    events: Vec<GpuEvent>,
    /// Event names, numbered in the order first added.
    event_names: Vec<String>,
    /// Float curve names, numbered in the order first added (at most [`MAX_CURVES`]).
    curve_names: Vec<String>,
    /// Compressed clips' packed tracks ([`crate::codec::format`]), 32-bit words.
    packed: Vec<u32>,
    /// The report of every clip the builder compressed.
    reports: Vec<(ClipId, crate::codec::ClipReport)>,
}

impl AnimationLibrary {
    /// Authoring skeletons (names, rest pose), by [`SkeletonId`].
    #[must_use]
    pub fn skeletons(&self) -> &[Skeleton] {
        &self.skeletons
    }

    /// Clip names, by [`ClipId`].
    #[must_use]
    pub fn clip_names(&self) -> &[String] {
        &self.clip_names
    }

    /// Per skeleton: where its joints live in `parents` and `inverse_binds`.
    #[must_use]
    pub fn gpu_skeletons(&self) -> &[GpuSkeleton] {
        &self.gpu_skeletons
    }

    /// Parent of each joint, relative to its skeleton; -1 for roots.
    #[must_use]
    pub fn parents(&self) -> &[i32] {
        &self.parents
    }

    /// Inverse bind matrices.
    #[must_use]
    pub fn inverse_binds(&self) -> &[Affine] {
        &self.inverse_binds
    }

    /// [`MAX_SOCKETS`] sockets per skeleton (skeleton `s`'s from `s · MAX_SOCKETS`), the first
    /// `GpuSkeleton::socket_count` of them in use.
    #[must_use]
    pub fn gpu_sockets(&self) -> &[GpuSocket] {
        &self.sockets
    }

    /// Whether any skeleton has a socket (animators then keep socket matrices beside the
    /// palettes).
    #[must_use]
    pub fn has_sockets(&self) -> bool {
        self.gpu_skeletons.iter().any(|s| s.socket_count > 0)
    }

    /// Per clip: skeleton, duration, tracks.
    #[must_use]
    pub fn clips(&self) -> &[GpuClip] {
        &self.clips
    }

    /// Three tracks (translation, rotation, scale) per joint per clip.
    #[must_use]
    pub fn tracks(&self) -> &[GpuTrack] {
        &self.tracks
    }

    /// Key times of all tracks.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Key values of all tracks: translation and scale in xyz, rotations as (x, y, z, w); also
    /// every skeleton's rest pose (see `GpuSkeleton::rest_offset`).
    #[must_use]
    pub fn values(&self) -> &[Vec4] {
        &self.values
    }

    /// Blend trees over these clips.
    #[must_use]
    pub fn blend(&self) -> &crate::blend::BlendLibrary {
        &self.blend
    }

    /// Masks, by [`MaskId`].
    #[must_use]
    pub fn masks(&self) -> &[MaskInfo] {
        &self.masks
    }

    /// Mask names, by [`MaskId`].
    #[must_use]
    pub fn mask_names(&self) -> &[String] {
        &self.mask_names
    }

    /// Every clip's events ([`GpuClip::event_offset`], `event_count`), each clip's sorted by time.
    #[must_use]
    pub fn events(&self) -> &[GpuEvent] {
        &self.events
    }

    /// Event names: what [`GpuEvent::name`] and event records' `event` number.
    #[must_use]
    pub fn event_names(&self) -> &[String] {
        &self.event_names
    }

    /// Float curve names: what each character's [`GpuOutput::curves`](crate::layout::GpuOutput)
    /// entries are the values of.
    #[must_use]
    pub fn curve_names(&self) -> &[String] {
        &self.curve_names
    }

    /// The number of curve name `name`, if a clip has such a curve.
    #[must_use]
    pub fn curve_id(&self, name: &str) -> Option<u32> {
        self.curve_names.iter().position(|n| n == name).map(|k| k as u32)
    }

    /// The number of event name `name`, if a clip has such an event.
    #[must_use]
    pub fn event_id(&self, name: &str) -> Option<u32> {
        self.event_names.iter().position(|n| n == name).map(|k| k as u32)
    }

    /// The events of clip `clip`, sorted by time.
    #[must_use]
    pub fn clip_events(&self, clip: ClipId) -> &[GpuEvent] {
        self.clips.get(clip.0 as usize).map_or(&[], |c| {
            &self.events[c.event_offset as usize..(c.event_offset + c.event_count) as usize]
        })
    }

    /// Whether clip `clip` has root motion ([`LibraryBuilder::add_clip_with_root_motion`]).
    #[must_use]
    pub fn has_root_motion(&self, clip: ClipId) -> bool {
        self.clips
            .get(clip.0 as usize)
            .is_some_and(|c| c.root_track != NO_ROOT_MOTION)
    }

    /// Whether any clip has root motion (the animator then compiles its stages with it).
    #[must_use]
    pub fn has_root_motion_clips(&self) -> bool {
        self.clips.iter().any(|c| c.root_track != NO_ROOT_MOTION)
    }

    /// The mask called `name`.
    #[must_use]
    pub fn mask_id(&self, name: &str) -> Option<MaskId> {
        self.mask_names.iter().position(|n| n == name).map(|k| MaskId(k as u32))
    }

    /// The clip called `name` of skeleton `skeleton`.
    #[must_use]
    pub fn clip_id(&self, skeleton: SkeletonId, name: &str) -> Option<ClipId> {
        (0..self.clips.len())
            .find(|&c| self.clips[c].skeleton == skeleton.0 && self.clip_names[c] == name)
            .map(|c| ClipId(c as u32))
    }

    /// The skeleton a clip animates.
    #[must_use]
    pub fn clip_skeleton(&self, clip: ClipId) -> Option<SkeletonId> {
        self.clips.get(clip.0 as usize).map(|c| SkeletonId(c.skeleton))
    }

    /// Duration of a clip in seconds.
    #[must_use]
    pub fn clip_duration(&self, clip: ClipId) -> Option<f32> {
        self.clips.get(clip.0 as usize).map(|c| c.duration)
    }

    /// Bytes of clip data the GPU holds (headers, tracks, times, values, packed tracks).
    #[must_use]
    pub fn clip_bytes(&self) -> usize {
        self.clips.len() * size_of::<GpuClip>()
            + self.tracks.len() * size_of::<GpuTrack>()
            + self.times.len() * 4
            + self.values.len() * 16
            + self.packed.len() * 4
    }

    /// The compressed clips' packed tracks ([`crate::codec::format`]): a track with
    /// [`crate::layout::INTERP_PACKED`] names its clip's blob by its first word here.
    #[must_use]
    pub fn packed(&self) -> &[u32] {
        &self.packed
    }

    /// Whether any clip is compressed (the stages then decode packed tracks).
    #[must_use]
    pub fn has_compressed_clips(&self) -> bool {
        !self.packed.is_empty()
    }

    /// Whether the library has compressed clips and every joint track of more than one key is
    /// packed: the sample stage then carries no raw-key sampler (`PACKED_ONLY`,
    /// [`crate::shaders::library_defs`]).
    #[must_use]
    pub fn samples_packed_only(&self) -> bool {
        self.has_compressed_clips()
            && self.clips.iter().all(|c| {
                let first = c.track_offset as usize;
                self.tracks[first..first + 3 * c.joint_count as usize]
                    .iter()
                    .all(|t| t.interpolation == INTERP_PACKED || t.key_count <= 1)
            })
    }

    /// The report of every clip the builder compressed ([`LibraryBuilder::set_compression`]).
    #[must_use]
    pub fn compression_reports(&self) -> &[(ClipId, crate::codec::ClipReport)] {
        &self.reports
    }
}

impl LibraryBuilder {
    /// An empty library.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a skeleton.
    pub fn add_skeleton(&mut self, skeleton: Skeleton) -> SkeletonId {
        let lib = &mut self.lib;
        let id = SkeletonId(lib.skeletons.len() as u32);
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
        // The rest pose, read when a blend's total weight is too small to stand alone.
        for r in skeleton.rest_pose() {
            lib.values
                .extend([r.translation.extend(0.0), Vec4::from(r.rotation), r.scale.extend(0.0)]);
        }
        lib.parents
            .extend(skeleton.parents().iter().map(|p| p.map_or(-1, |p| p as i32)));
        lib.inverse_binds
            .extend(skeleton.inverse_binds().iter().map(Affine::from_mat4));
        lib.skeletons.push(skeleton);
        id
    }

    /// The skeleton added as `id`.
    #[must_use]
    pub fn skeleton(&self, id: SkeletonId) -> Option<&Skeleton> {
        self.lib.skeletons.get(id.0 as usize)
    }

    /// Validates `clip` against skeleton `skeleton` and packs it. On error nothing is added.
    ///
    /// Errors: an unknown skeleton; a duplicate clip name for the skeleton; a duration that is not
    /// finite and positive; a track for a joint the skeleton lacks, or two for one joint; a track
    /// with no keys, non-finite or negative or unsorted key times, a value count that does not
    /// match, non-finite values, or a zero-length rotation; more than [`MAX_CLIP_EVENTS`] events,
    /// an event with an empty name, a time outside `[0, duration]` or a threshold outside
    /// `[0, 1]`.
    ///
    /// With [`LibraryBuilder::set_compression`] on, the clip is compressed first
    /// ([`crate::codec::compress`]) and its report kept
    /// ([`AnimationLibrary::compression_reports`]).
    pub fn add_clip(&mut self, skeleton: SkeletonId, clip: &Clip) -> Result<ClipId> {
        if let Some(settings) = self.compression {
            let skel = self.lib.skeletons.get(skeleton.0 as usize).ok_or_else(|| Error::Clip {
                clip: clip.name.clone(),
                what: format!("skeleton {} does not exist", skeleton.0),
            })?;
            let (compressed, report) = crate::codec::compress(skel, clip, &settings)?;
            let id = self.add_compressed_clip(skeleton, &compressed)?;
            self.lib.reports.push((id, report));
            return Ok(id);
        }
        self.add_clip_packed(skeleton, clip, None)
    }

    /// Compresses every clip added after this with `settings` (`None`: clips stay raw, the
    /// default). Raw and compressed clips play side by side.
    pub fn set_compression(&mut self, settings: Option<crate::codec::CompressionSettings>) {
        self.compression = settings;
    }

    /// Checks a compressed clip ([`crate::codec::compress`], [`crate::codec::file::read`])
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

    /// Skeleton `skeleton`, for clip `clip`; an error naming the clip where it does not exist.
    fn skeleton_for(&self, skeleton: SkeletonId, clip: &str) -> Result<&Skeleton> {
        self.lib.skeletons.get(skeleton.0 as usize).ok_or_else(|| Error::Clip {
            clip: clip.to_string(),
            what: format!("skeleton {} does not exist", skeleton.0),
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
        if self.lib.clip_id(skeleton, &clip.name).is_some() {
            return Err(cerr(format!(
                "skeleton '{}' already has a clip of that name",
                skel.name()
            )));
        }
        // Validate everything before packing so an error leaves the library unchanged.
        let packed = pack_clip(skel, clip)?;
        let curves = pack_curves(clip)?;
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
        let id = ClipId(lib.clips.len() as u32);
        let mut events = clip.events.clone();
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        lib.clips.push(GpuClip {
            skeleton: skeleton.0,
            joint_count: n as u32,
            track_offset: lib.tracks.len() as u32,
            flags: u32::from(clip.looping) | curve_mask << CLIP_CURVE_SHIFT,
            duration: clip.duration,
            event_offset: lib.events.len() as u32,
            event_count: events.len() as u32,
            root_track: NO_ROOT_MOTION,
        });
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
        lib.clip_names.push(clip.name.clone());
        let mut time_arrays: HashMap<Vec<u32>, u32> = HashMap::new();
        // A compressed clip's packed channels: track 3 j + c of the clip reads blob track k.
        let mut packed_track: HashMap<usize, u32> = HashMap::new();
        let blob_start = lib.packed.len() as u32;
        if let Some(c) = compressed.filter(|c| !c.packed.is_empty()) {
            for (k, p) in c.packed.iter().enumerate() {
                packed_track.insert(3 * p.joint as usize + p.channel.index() as usize, k as u32);
            }
            lib.packed.extend_from_slice(&c.blob);
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
        {
            for t in tracks {
                index += 1;
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

    /// Extracts root motion from `clip` ([`crate::root_motion::extract`]) and adds the clip in
    /// place with its root track: played by a character with root motion on
    /// ([`crate::gpu::Controller::set_root_motion`]), the clip moves the character on the GPU. On error
    /// nothing is added.
    ///
    /// Errors: as [`LibraryBuilder::add_clip`]; a root joint the skeleton lacks.
    pub fn add_clip_with_root_motion(
        &mut self,
        skeleton: SkeletonId,
        clip: &Clip,
        motion: &crate::root_motion::RootMotion,
    ) -> Result<ClipId> {
        let skel = self.lib.skeletons.get(skeleton.0 as usize).ok_or_else(|| Error::Clip {
            clip: clip.name.clone(),
            what: format!("skeleton {} does not exist", skeleton.0),
        })?;
        let (in_place, root) = crate::root_motion::extract(skel, clip, motion)?;
        let terr = |channel, what: String| Error::Track {
            clip: clip.name.clone(),
            joint: "(root motion)".into(),
            channel,
            what,
        };
        let translation = pack_track(Some(&root.translation_track()), Vec3::ZERO, |v| v.extend(0.0))
            .map_err(|e| terr(Channel::Translation, e))?;
        let rotation =
            pack_rotation(Some(&root.rotation_track()), Quat::IDENTITY).map_err(|e| terr(Channel::Rotation, e))?;
        let id = self.add_clip(skeleton, &in_place)?;
        let lib = &mut self.lib;
        lib.clips[id.0 as usize].root_track = lib.tracks.len() as u32;
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
    pub fn add_blend_tree(&mut self, tree: &crate::blend::BlendTree) -> Result<crate::blend::BlendTreeId> {
        let names: Vec<&str> = self.lib.skeletons.iter().map(Skeleton::name).collect();
        let catalog = crate::blend::ClipCatalog {
            clips: &self.lib.clips,
            clip_names: &self.lib.clip_names,
            skeleton_names: &names,
        };
        self.lib.blend.add_tree(&catalog, tree)
    }

    /// Adds a mask: one weight in [0, 1] per joint of `skeleton` (see [`crate::layers`] for helpers
    /// that build one from a joint and a blend depth, or from a list of joints).
    ///
    /// Errors: an unknown skeleton, a weight count that is not the joint count, a weight outside
    /// [0, 1] or not finite, a duplicate name.
    pub fn add_mask(&mut self, skeleton: SkeletonId, name: &str, weights: &[f32]) -> Result<MaskId> {
        let err = |what: String| Error::Clip {
            clip: format!("mask {name}"),
            what,
        };
        let skel = self
            .lib
            .skeletons
            .get(skeleton.0 as usize)
            .ok_or_else(|| err(format!("skeleton {} does not exist", skeleton.0)))?;
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
        if self.lib.mask_names.iter().any(|n| n == name) {
            return Err(err("a mask of that name exists already".into()));
        }
        let lib = &mut self.lib;
        let id = MaskId(lib.masks.len() as u32);
        lib.masks.push(MaskInfo {
            skeleton: skeleton.0,
            offset: lib.values.len() as u32,
        });
        lib.mask_names.push(name.to_string());
        lib.values.extend(weights.iter().map(|&w| Vec4::new(w, 0.0, 0.0, 0.0)));
        Ok(id)
    }

    /// The finished library.
    #[must_use]
    pub fn build(self) -> AnimationLibrary {
        self.lib
    }
}

/// Checks `clip` against `skel` — duration, joints, one track per joint, every track's keys —
/// and packs its tracks, three per joint (missing channels hold the rest pose).
fn pack_clip(skel: &Skeleton, clip: &Clip) -> Result<Vec<[PackedTrack; 3]>> {
    let cerr = |what: String| Error::Clip {
        clip: clip.name.clone(),
        what,
    };
    if !clip.duration.is_finite() || clip.duration <= 0.0 {
        return Err(cerr(format!("duration {} must be finite and positive", clip.duration)));
    }
    if clip.events.len() > MAX_CLIP_EVENTS as usize {
        return Err(cerr(format!(
            "has {} events; a clip may have {MAX_CLIP_EVENTS}",
            clip.events.len()
        )));
    }
    for (k, e) in clip.events.iter().enumerate() {
        let what = if e.name.is_empty() {
            Some("has no name".to_owned())
        } else if !(0.0..=clip.duration).contains(&e.time) {
            Some(format!("time {} is outside [0, {}]", e.time, clip.duration))
        } else if !(0.0..=1.0).contains(&e.threshold) {
            Some(format!("threshold {} is outside [0, 1]", e.threshold))
        } else {
            None
        };
        if let Some(what) = what {
            return Err(cerr(format!("event {k} ('{}'): {what}", e.name)));
        }
    }
    let n = skel.joint_count();
    let mut by_joint: Vec<Option<usize>> = vec![None; n];
    for (k, t) in clip.tracks.iter().enumerate() {
        let j = skel.joint_index(&t.joint).ok_or_else(|| {
            cerr(format!(
                "animates joint '{}', which skeleton '{}' does not have",
                t.joint,
                skel.name()
            ))
        })?;
        if by_joint[j].replace(k).is_some() {
            return Err(cerr(format!("has two tracks for joint '{}'", t.joint)));
        }
    }
    let mut packed: Vec<[PackedTrack; 3]> = Vec::with_capacity(n);
    for (j, track) in by_joint.iter().enumerate() {
        let rest = skel.rest_pose()[j];
        let jt = track.map(|k| &clip.tracks[k]);
        let name = &skel.joint_names()[j];
        let terr = |channel, what: String| Error::Track {
            clip: clip.name.clone(),
            joint: name.clone(),
            channel,
            what,
        };
        let t = pack_track(jt.and_then(|t| t.translation.as_ref()), rest.translation, |v| {
            v.extend(0.0)
        })
        .map_err(|e| terr(Channel::Translation, e))?;
        let r = pack_rotation(jt.and_then(|t| t.rotation.as_ref()), rest.rotation)
            .map_err(|e| terr(Channel::Rotation, e))?;
        let s = pack_track(jt.and_then(|t| t.scale.as_ref()), rest.scale, |v| v.extend(0.0))
            .map_err(|e| terr(Channel::Scale, e))?;
        packed.push([t, r, s]);
    }
    Ok(packed)
}

/// Checks an authoring clip as [`LibraryBuilder::add_clip`] does, against `skeleton`: a finite
/// positive duration, only joints the skeleton has, one track per joint, and every track's keys
/// (at least one, times finite, not negative and increasing, the right number of values,
/// rotations not zero, values finite).
///
/// Errors: [`Error::Clip`] or [`Error::Track`], naming the clip, joint and channel.
pub fn validate_clip(skeleton: &Skeleton, clip: &Clip) -> Result<()> {
    pack_clip(skeleton, clip)?;
    pack_curves(clip).map(|_| ())
}

/// Checks a clip's float curves — names not empty and distinct, keys as a joint track's — and
/// packs each (its values in x).
fn pack_curves(clip: &Clip) -> Result<Vec<(String, PackedTrack)>> {
    let mut out: Vec<(String, PackedTrack)> = Vec::with_capacity(clip.curves.len());
    for (k, c) in clip.curves.iter().enumerate() {
        let cerr = |what: String| Error::Clip {
            clip: clip.name.clone(),
            what: format!("curve {k} ('{}'): {what}", c.name),
        };
        if c.name.is_empty() {
            return Err(cerr("has no name".into()));
        }
        if out.iter().any(|(n, _)| *n == c.name) {
            return Err(cerr("a curve of that name comes before it".into()));
        }
        let track = Track {
            interpolation: c.track.interpolation,
            times: c.track.times.clone(),
            values: c.track.values.iter().map(|&v| Vec3::new(v, 0.0, 0.0)).collect(),
        };
        let packed = pack_track(Some(&track), Vec3::ZERO, |v| v.extend(0.0)).map_err(cerr)?;
        out.push((c.name.clone(), packed));
    }
    Ok(out)
}

struct PackedTrack {
    interpolation: Interpolation,
    times: Vec<f32>,
    values: Vec<Vec4>,
}

fn check_times(times: &[f32]) -> std::result::Result<(), String> {
    if times.is_empty() {
        return Err("has no keys".into());
    }
    for (k, &t) in times.iter().enumerate() {
        if !t.is_finite() || t < 0.0 {
            return Err(format!("key {k}: time {t} must be finite and not negative"));
        }
        if k > 0 && t <= times[k - 1] {
            return Err(format!(
                "key {k}: time {t} is not after the previous key's {}",
                times[k - 1]
            ));
        }
    }
    Ok(())
}

fn check_counts<T>(track: &Track<T>) -> std::result::Result<(), String> {
    let per_key = if track.interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    if track.values.len() != track.times.len() * per_key {
        return Err(format!(
            "{} keys need {} values ({per_key} per key), found {}",
            track.times.len(),
            track.times.len() * per_key,
            track.values.len()
        ));
    }
    Ok(())
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

fn pack_track(
    track: Option<&Track<Vec3>>,
    rest: Vec3,
    f: impl Fn(Vec3) -> Vec4,
) -> std::result::Result<PackedTrack, String> {
    let Some(track) = track else {
        return Ok(collapse(Interpolation::Step, vec![0.0], vec![f(rest)]));
    };
    check_times(&track.times)?;
    check_counts(track)?;
    if let Some(k) = track.values.iter().position(|v| !v.is_finite()) {
        return Err(format!("value {k} is not finite"));
    }
    Ok(collapse(
        track.interpolation,
        track.times.clone(),
        track.values.iter().map(|v| f(*v)).collect(),
    ))
}

fn pack_rotation(track: Option<&Track<Quat>>, rest: Quat) -> std::result::Result<PackedTrack, String> {
    let Some(track) = track else {
        return Ok(collapse(Interpolation::Step, vec![0.0], vec![Vec4::from(rest)]));
    };
    check_times(&track.times)?;
    check_counts(track)?;
    let cubic = track.interpolation == Interpolation::CubicSpline;
    let mut values = Vec::with_capacity(track.values.len());
    for (k, q) in track.values.iter().enumerate() {
        if !q.is_finite() {
            return Err(format!("value {k} is not finite"));
        }
        let is_key_value = !cubic || k % 3 == 1;
        if is_key_value {
            let len = q.length();
            if len < 1e-6 {
                return Err(format!("value {k} is a zero-length quaternion"));
            }
            values.push(Vec4::from(*q) / len);
        } else {
            values.push(Vec4::from(*q)); // tangents are not normalized
        }
    }
    Ok(collapse(track.interpolation, track.times.clone(), values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::JointTrack;
    use crate::math::Transform;

    fn skel() -> Skeleton {
        Skeleton::from_rest_pose(
            "s",
            vec![
                ("root".into(), None, Transform::IDENTITY),
                ("arm".into(), Some(0), Transform::from_translation(Vec3::Y)),
            ],
        )
        .unwrap()
    }

    fn clip(tracks: Vec<JointTrack>) -> Clip {
        Clip {
            events: Vec::new(),
            curves: Vec::new(),
            name: "c".into(),
            duration: 1.0,
            looping: true,
            tracks,
        }
    }

    #[test]
    fn missing_channels_hold_the_rest_pose_and_constants_are_stored_once() {
        let mut b = LibraryBuilder::new();
        let s = b.add_skeleton(skel());
        let c = b
            .add_clip(
                s,
                &clip(vec![JointTrack {
                    joint: "arm".into(),
                    rotation: Some(Track::linear([(0.0, Quat::IDENTITY), (1.0, Quat::IDENTITY)])),
                    ..Default::default()
                }]),
            )
            .unwrap();
        let lib = b.build();
        assert_eq!(lib.clips[c.0 as usize].joint_count, 2);
        assert_eq!(lib.tracks.len(), 6);
        assert!(lib.tracks.iter().all(|t| t.key_count == 1));
        assert_eq!(
            lib.values[lib.tracks[3].value_offset as usize],
            Vec4::new(0.0, 1.0, 0.0, 0.0)
        );
    }

    #[test]
    fn bad_clips_are_rejected_with_names_and_leave_the_library_unchanged() {
        let mut b = LibraryBuilder::new();
        let s = b.add_skeleton(skel());
        let cases: Vec<(JointTrack, &str)> = vec![
            (
                JointTrack {
                    joint: "tail".into(),
                    ..Default::default()
                },
                "'tail'",
            ),
            (
                JointTrack {
                    joint: "arm".into(),
                    translation: Some(Track::linear([(0.5, Vec3::ZERO), (0.2, Vec3::ONE)])),
                    ..Default::default()
                },
                "not after",
            ),
            (
                JointTrack {
                    joint: "arm".into(),
                    translation: Some(Track::linear([(0.0, Vec3::ZERO), (0.2, Vec3::NAN)])),
                    ..Default::default()
                },
                "not finite",
            ),
            (
                JointTrack {
                    joint: "arm".into(),
                    rotation: Some(Track::linear([(0.0, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0))])),
                    ..Default::default()
                },
                "zero-length",
            ),
            (
                JointTrack {
                    joint: "arm".into(),
                    scale: Some(Track {
                        interpolation: Interpolation::CubicSpline,
                        times: vec![0.0],
                        values: vec![Vec3::ONE],
                    }),
                    ..Default::default()
                },
                "need 3 values",
            ),
        ];
        for (track, expect) in cases {
            let e = b.add_clip(s, &clip(vec![track])).unwrap_err().to_string();
            assert!(e.contains("clip 'c'") && e.contains(expect), "{e}");
        }
        let mut zero = clip(vec![]);
        zero.duration = 0.0;
        assert!(b.add_clip(s, &zero).unwrap_err().to_string().contains("duration"));
        assert!(b.add_clip(SkeletonId(9), &clip(vec![])).is_err());
        let lib = b.build();
        assert!(
            lib.clips.is_empty() && lib.tracks.is_empty() && lib.values.len() == 6,
            "only the rest pose"
        );
    }
}
