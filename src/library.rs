//! The runtime clip library: skeletons and clips validated and packed into flat arrays, exactly the
//! bytes the GPU reads (and the CPU mirror reads too). The offline half's
//! [`LibraryBuilder`](crate::offline::builder::LibraryBuilder) joins the authoring types
//! ([`Skeleton`], [`crate::Clip`]) to this runtime form; nothing here imports it.

use crate::error::{Error, Result};
use crate::id::LibraryTag;
use crate::layout::{GpuClip, GpuEvent, GpuSkeleton, GpuSocket, GpuTrack, INTERP_PACKED, NO_ROOT_MOTION};
use crate::math::Affine;
use crate::skeleton::Skeleton;
use glam::Vec4;

pub use crate::id::{MaskId, SkeletonId};

/// Where a mask lives: its skeleton, and the first of its per-joint weights in `values` (x).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskInfo {
    /// The skeleton it was built for.
    pub skeleton: u32,
    /// First entry in `values`.
    pub offset: u32,
}

pub use crate::clip::ClipId;

/// How far from 1 a scale, or from orthonormal an inverse bind matrix, may be for
/// [`AnimationLibrary::has_scale`] to call it none: within it, skinning that skips the stretch
/// is off by about this fraction of a joint's reach for each joint of its chain.
pub const SCALE_TOLERANCE: f32 = 1e-5;

/// Each compressed clip's blob starts at a multiple of this many words of
/// [`AnimationLibrary::packed`] (zeros between): `shaders/shared/library.wgsl` reads a track's
/// six-word clip range, at word 8 + 6 k of its blob, in two 16-byte loads.
pub const PACKED_BLOB_ALIGN: usize = 4;

/// Skeletons and clips in runtime form. Build one with
/// [`LibraryBuilder`](crate::offline::builder::LibraryBuilder), which validates every
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
///
/// Its ids ([`ClipId`], [`SkeletonId`], [`MaskId`], [`crate::blend::BlendTreeId`]) carry its
/// [`LibraryTag`]; every function taking one refuses one from another library
/// ([`crate::Error::ForeignId`]). A clone keeps the tag.
#[derive(Clone, Debug)]
pub struct AnimationLibrary {
    /// Its tag, which every id it issues carries (also its blend library's).
    pub(crate) tag: LibraryTag,
    /// Authoring skeletons (names, rest pose), by [`SkeletonId`].
    pub(crate) skeletons: Vec<Skeleton>,
    /// Clip names, by [`ClipId`].
    pub(crate) clip_names: Vec<String>,
    /// Per skeleton: where its joints live in `parents` and `inverse_binds`.
    pub(crate) gpu_skeletons: Vec<GpuSkeleton>,
    /// Parent of each joint, relative to its skeleton; -1 for roots.
    pub(crate) parents: Vec<i32>,
    /// Per joint, as `parents`: the hierarchy levels ([`AnimationLibrary::levels`]).
    pub(crate) levels: Vec<u32>,
    /// Inverse bind matrices.
    pub(crate) inverse_binds: Vec<Affine>,
    /// [`MAX_SOCKETS`](crate::layout::MAX_SOCKETS) per skeleton, the first `GpuSkeleton::socket_count` in use.
    pub(crate) sockets: Vec<GpuSocket>,
    /// [`MAX_IK_CHAINS`](crate::layout::MAX_IK_CHAINS) IK chains per skeleton.
    pub(crate) ik_chains: Vec<crate::layout::GpuIkChain>,
    /// Per clip: skeleton, duration, tracks.
    pub(crate) clips: Vec<GpuClip>,
    /// Three tracks (translation, rotation, scale) per joint per clip.
    pub(crate) tracks: Vec<GpuTrack>,
    /// Key times of all tracks.
    pub(crate) times: Vec<f32>,
    /// Key values of all tracks: translation and scale in xyz, rotations as (x, y, z, w); also
    /// every skeleton's rest pose (see `GpuSkeleton::rest_offset`).
    pub(crate) values: Vec<Vec4>,
    /// Blend trees over these clips.
    pub(crate) blend: crate::blend::BlendLibrary,
    /// State machines over these clips and trees.
    pub(crate) machines: crate::machine::MachineLibrary,
    /// Masks, by [`MaskId`].
    pub(crate) masks: Vec<MaskInfo>,
    /// Mask names, by [`MaskId`].
    pub(crate) mask_names: Vec<String>,
    /// Every clip's events, each clip's sorted by time (`GpuClip::event_offset`).
    pub(crate) events: Vec<GpuEvent>,
    /// Event names, numbered in the order first added.
    pub(crate) event_names: Vec<String>,
    /// Float curve names, numbered in the order first added (at most [`MAX_CURVES`](crate::layout::MAX_CURVES)).
    pub(crate) curve_names: Vec<String>,
    /// Compressed clips' packed tracks ([`crate::codec::format`]), 32-bit words.
    pub(crate) packed: Vec<u32>,
    /// Whether a skinning matrix may scale or shear ([`AnimationLibrary::has_scale`]).
    pub(crate) has_scale: bool,
    /// Per skeleton: each joint's extent over its rest pose and every clip's keys
    /// ([`crate::reach`]).
    pub(crate) skeleton_extents: Vec<Vec<crate::reach::Extent>>,
    /// Per skeleton: the most morph targets one of its clips drives (kept as clips are added).
    pub(crate) skeleton_morph_targets: Vec<u32>,
    /// Per clip: each joint's extent over the clip's keys.
    pub(crate) clip_extents: Vec<Vec<crate::reach::Extent>>,
    /// Per clip: the track whose key times the sample stage searches once per character and
    /// sample ([`AnimationLibrary::clip_key_tracks`]).
    pub(crate) clip_key_tracks: Vec<u32>,
    /// The report of every clip the builder compressed.
    pub(crate) reports: Vec<(ClipId, crate::codec::ClipReport)>,
    /// Per skeleton: its retarget table when it plays another skeleton's clips
    /// ([`crate::LibraryBuilder::add_retargeted_skeleton`]).
    pub(crate) retargets: Vec<Option<crate::layout::GpuRetarget>>,
}

/// An empty library with a new tag.
impl Default for AnimationLibrary {
    fn default() -> Self {
        let tag = LibraryTag::new();
        Self {
            tag,
            skeletons: Vec::new(),
            clip_names: Vec::new(),
            gpu_skeletons: Vec::new(),
            parents: Vec::new(),
            levels: Vec::new(),
            inverse_binds: Vec::new(),
            sockets: Vec::new(),
            ik_chains: Vec::new(),
            clips: Vec::new(),
            tracks: Vec::new(),
            times: Vec::new(),
            values: Vec::new(),
            blend: crate::blend::BlendLibrary::with_tag(tag),
            machines: crate::machine::MachineLibrary::with_tag(tag),
            masks: Vec::new(),
            mask_names: Vec::new(),
            events: Vec::new(),
            event_names: Vec::new(),
            curve_names: Vec::new(),
            packed: Vec::new(),
            has_scale: false,
            skeleton_extents: Vec::new(),
            skeleton_morph_targets: Vec::new(),
            clip_extents: Vec::new(),
            clip_key_tracks: Vec::new(),
            reports: Vec::new(),
            retargets: Vec::new(),
        }
    }
}

/// A raw track of more than one key (one the sample stage searches).
fn keyed_raw(t: &GpuTrack) -> bool {
    t.interpolation != INTERP_PACKED && t.key_count > 1
}

impl AnimationLibrary {
    /// Each joint's extent over what a layer plays: clip `clip`, or every clip of the blend tree
    /// of nodes `tree_offset..tree_offset + tree_nodes` when `tree_nodes > 0` ([`crate::reach`]).
    fn layer_extents(&self, clip: u32, tree_offset: u32, tree_nodes: u32, joints: usize) -> Vec<crate::reach::Extent> {
        let clips: Vec<u32> = if tree_nodes == 0 {
            vec![clip]
        } else {
            let nodes = self
                .blend
                .nodes
                .iter()
                .skip(tree_offset as usize)
                .take(tree_nodes as usize);
            nodes
                .filter(|n| n.kind == crate::layout::node_kind::CLIP)
                .map(|n| n.clip)
                .collect()
        };
        let mut out = vec![crate::reach::Extent::default(); joints];
        for c in clips {
            for (o, e) in out
                .iter_mut()
                .zip(self.clip_extents.get(c as usize).into_iter().flatten())
            {
                *o = o.max(*e);
            }
        }
        out
    }

    /// Checks that no vertex of `mesh` (validated, [`SkinnedMesh::validate`](crate::SkinnedMesh::validate)), skinned
    /// to skeleton `skeleton` in any pose of its clips, moves farther than
    /// [`MAX_REACH`](crate::reach::MAX_REACH) from the origin: for each vertex, the sum over its
    /// influences of weight × (the skinning matrix's reach × the vertex's length + its
    /// translation's reach) ([`crate::reach`]). The importer checks every mesh it imports.
    ///
    /// Errors: a skeleton of another library ([`Error::ForeignId`]) or one that does not exist;
    /// [`Error::Mesh`] naming the first vertex that may reach past the bound and how far.
    pub fn check_mesh(&self, skeleton: SkeletonId, mesh: &crate::SkinnedMesh) -> Result<()> {
        let (name, far) = self.vertex_reaches(skeleton, mesh, false)?;
        if let Some((v, far)) = far.iter().enumerate().find(|(_, f)| !crate::reach::within(**f)) {
            return Err(Error::Mesh {
                mesh: mesh.name.clone(),
                what: format!(
                    "vertex {v} skinned to skeleton '{name}' may reach {far:.3e} from the origin; the library allows {:.0e}",
                    crate::reach::MAX_REACH
                ),
            });
        }
        Ok(())
    }

    /// How far from the model origin any joint of skeleton `skeleton` can be in any pose of its
    /// clips (without additive layers): the longest model-space translation [`crate::reach`]
    /// bounds. The default radius culling tests ([`crate::gpu::Controller::set_bounds`]); a mesh
    /// reaches farther, by its skin: [`AnimationLibrary::mesh_radius`].
    ///
    /// Errors: a skeleton of another library ([`Error::ForeignId`]) or one that does not exist.
    pub fn skeleton_radius(&self, skeleton: SkeletonId) -> Result<f32> {
        let k = skeleton.check(self.tag)? as usize;
        Ok(self.joint_radius(k))
    }

    /// Skeleton `k`'s [`AnimationLibrary::skeleton_radius`] (0 for none; a skeleton the builder
    /// accepted has a reach).
    pub(crate) fn joint_radius(&self, k: usize) -> f32 {
        let (Some(skel), Some(extents)) = (self.skeletons.get(k), self.skeleton_extents.get(k)) else {
            return 0.0;
        };
        skel.reach(extents, &[])
            .map_or(0.0, |r| r.iter().map(|j| j.translation).fold(0.0, f64::max) as f32)
    }

    /// How far from the model origin any vertex of `mesh` skinned to skeleton `skeleton` can be in
    /// any pose of its clips (without additive layers): a radius for culling that holds the whole
    /// mesh ([`crate::gpu::Controller::set_bounds`]). For each vertex, the sum over its
    /// influences of weight × (the joint's model translation reach + its linear reach × the
    /// vertex's distance from the joint in the bind pose) ([`crate::reach`]): conservative, every
    /// key at its largest at once, and tighter than [`AnimationLibrary::check_mesh`]'s bound,
    /// which goes through the skinning matrices.
    ///
    /// Errors: as [`AnimationLibrary::check_mesh`].
    pub fn mesh_radius(&self, skeleton: SkeletonId, mesh: &crate::SkinnedMesh) -> Result<f32> {
        self.check_mesh(skeleton, mesh)?;
        let (_, far) = self.vertex_reaches(skeleton, mesh, true)?;
        Ok(far.into_iter().fold(0.0, f64::max) as f32)
    }

    /// Skeleton `skeleton`'s name and, for each vertex of `mesh`, how far from the origin it may
    /// reach skinned to it: the sum over its influences of weight × (the skinning matrix's reach
    /// × the vertex's length + its translation's reach); or, `by_joint`, of weight × (the model
    /// matrix's translation reach + its linear reach × the vertex's length in the joint's bind
    /// space).
    fn vertex_reaches(
        &self,
        skeleton: SkeletonId,
        mesh: &crate::SkinnedMesh,
        by_joint: bool,
    ) -> Result<(String, Vec<f64>)> {
        let k = skeleton.check(self.tag)? as usize;
        let skel = self.skeletons.get(k).ok_or_else(|| Error::Limit {
            what: format!("skeleton {k} does not exist"),
        })?;
        let reach = skel
            .reach(&self.skeleton_extents[k], &[])
            .map_err(|(j, what)| Error::Mesh {
                mesh: mesh.name.clone(),
                what: format!("skeleton '{}' joint '{}': {what}", skel.name(), skel.joint_names()[j]),
            })?;
        let far = mesh
            .positions
            .iter()
            .zip(mesh.joints.iter().zip(&mesh.weights))
            .map(|(p, (joints, weights))| {
                let length = p.as_dvec3().length();
                let far = |j: usize| {
                    let Some(r) = reach.get(j) else {
                        return f64::INFINITY;
                    };
                    match skel.inverse_binds().get(j) {
                        Some(inverse_bind) if by_joint => {
                            r.translation + r.linear * inverse_bind.as_dmat4().transform_point3(p.as_dvec3()).length()
                        }
                        _ => r.skin_point(length),
                    }
                };
                joints
                    .iter()
                    .zip(weights)
                    .filter(|(_, w)| **w > 0.0)
                    .map(|(j, w)| f64::from(*w) * far(*j as usize))
                    .sum()
            })
            .collect();
        Ok((skel.name().to_owned(), far))
    }

    /// Whether skeleton `skeleton`, playing any of its clips with additive layers of
    /// `(clip, tree_offset, tree_nodes)` on top, stays within [`crate::reach::MAX_REACH`]; else
    /// the first joint past it (its name) and what it reaches.
    pub(crate) fn check_additive_layers(
        &self,
        skeleton: u32,
        layers: &[(u32, u32, u32)],
    ) -> std::result::Result<(), String> {
        let Some(skel) = self.skeletons.get(skeleton as usize) else {
            return Ok(());
        };
        let n = skel.joint_count();
        let extents: Vec<Vec<crate::reach::Extent>> =
            layers.iter().map(|&(c, o, k)| self.layer_extents(c, o, k, n)).collect();
        let additive: Vec<&[crate::reach::Extent]> = extents.iter().map(Vec::as_slice).collect();
        skel.reach(&self.skeleton_extents[skeleton as usize], &additive)
            .map(|_| ())
            .map_err(|(j, what)| format!("joint '{}': {what}", skel.joint_names()[j]))
    }

    /// Its tag: every id it issues carries it ([`crate::id`]).
    #[must_use]
    pub fn tag(&self) -> LibraryTag {
        self.tag
    }

    /// Gives it a new tag (a copy that is to become a library of its own).
    pub(crate) fn retag(&mut self) {
        self.tag = LibraryTag::new();
        self.blend.set_tag(self.tag);
        self.machines.set_tag(self.tag);
    }

    /// The id of skeleton `index`, if it has one (for tools and tests; the builder's
    /// [`add_skeleton`](crate::LibraryBuilder::add_skeleton) returns it too).
    #[must_use]
    pub fn skeleton_at(&self, index: u32) -> Option<SkeletonId> {
        ((index as usize) < self.skeletons.len()).then(|| SkeletonId::new(index, self.tag))
    }

    /// The id of clip `index`, if it has one: for tools and tests, and to turn a GPU struct's
    /// clip index (`GpuInstance::clip`) back into an id. Clips are numbered in the order added.
    #[must_use]
    pub fn clip_at(&self, index: u32) -> Option<ClipId> {
        ((index as usize) < self.clips.len()).then(|| ClipId::new(index, self.tag))
    }

    /// The id of mask `index`, if it has one (for tools and tests).
    #[must_use]
    pub fn mask_at(&self, index: u32) -> Option<MaskId> {
        ((index as usize) < self.masks.len()).then(|| MaskId::new(index, self.tag))
    }

    /// The header of clip `clip`.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `clip`.
    pub fn clip_header(&self, clip: ClipId) -> Result<&GpuClip> {
        let index = clip.check(self.tag)?;
        self.clips.get(index as usize).ok_or_else(|| Error::Limit {
            what: format!("clip {index} does not exist (the library has {})", self.clips.len()),
        })
    }

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

    /// The hierarchy levels the fused pass walks, indexed as [`AnimationLibrary::parents`]: for
    /// each skeleton, from its `joint_offset`, an entry for each of its first `n =
    /// min(joint_count, MAX_FUSED_JOINTS)` joints, `joint | depth << 8 | start << 16`: entry `k`
    /// holds the `k`-th of those joints in depth order ([`crate::Skeleton::depth_order`]) and its
    /// depth, and where level `k` starts in that order (`n` for `k` past the deepest level), so
    /// that level `d` is entries `start(d)..start(d + 1)`; then zeros for any joints past
    /// [`MAX_FUSED_JOINTS`](crate::layout::MAX_FUSED_JOINTS) (which the fused path does not
    /// animate).
    #[must_use]
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// Inverse bind matrices.
    #[must_use]
    pub fn inverse_binds(&self) -> &[Affine] {
        &self.inverse_binds
    }

    /// [`MAX_SOCKETS`](crate::layout::MAX_SOCKETS) sockets per skeleton (skeleton `s`'s from `s · MAX_SOCKETS`), the first
    /// `GpuSkeleton::socket_count` of them in use.
    #[must_use]
    pub fn gpu_sockets(&self) -> &[GpuSocket] {
        &self.sockets
    }

    /// [`MAX_IK_CHAINS`](crate::layout::MAX_IK_CHAINS) IK chains per skeleton (skeleton `s`'s
    /// from `s · MAX_IK_CHAINS`), kind `NONE` past its own.
    #[must_use]
    pub fn gpu_ik_chains(&self) -> &[crate::layout::GpuIkChain] {
        &self.ik_chains
    }

    /// Skeleton `skeleton`'s retarget table, when it plays the clips of another skeleton
    /// ([`crate::LibraryBuilder::add_retargeted_skeleton`]); `None` for a skeleton that plays its
    /// own, or one that does not exist.
    #[must_use]
    pub fn retarget(&self, skeleton: SkeletonId) -> Option<&crate::layout::GpuRetarget> {
        let k = skeleton.check(self.tag).ok()?;
        self.retarget_at(k)
    }

    /// [`AnimationLibrary::retarget`] by skeleton index.
    pub(crate) fn retarget_at(&self, skeleton: u32) -> Option<&crate::layout::GpuRetarget> {
        self.retargets.get(skeleton as usize)?.as_ref()
    }

    /// Whether a skeleton plays another's clips (animators then compile the sample stage with
    /// run-time retargeting).
    #[must_use]
    pub fn has_retargets(&self) -> bool {
        self.retargets.iter().any(Option::is_some)
    }

    /// Whether a character of skeleton `character` may play a clip of skeleton `clip`: its own,
    /// or the one it is retargeted from.
    #[must_use]
    pub(crate) fn plays_on(&self, clip: u32, character: u32) -> bool {
        clip == character || self.retarget_at(character).is_some_and(|r| r.source == clip)
    }

    /// Whether any skeleton has an IK chain (animators then run the IK stage).
    #[must_use]
    pub fn has_ik(&self) -> bool {
        self.skeletons.iter().any(|s| !s.ik_chains().is_empty())
    }

    /// Whether any skeleton has a socket (animators then keep socket matrices beside the
    /// palettes).
    #[must_use]
    pub fn has_sockets(&self) -> bool {
        self.gpu_skeletons.iter().any(|s| s.socket_count > 0)
    }

    /// Whether any skinning matrix of the library may scale or shear: a rest pose or a clip key
    /// (raw or compressed, where a packed scale channel counts) with a scale more than
    /// [`SCALE_TOLERANCE`] from 1 (a negative scale, a mirror, too), or an inverse bind matrix
    /// whose 3×3 part is not a rotation within it. Without, dual-quaternion skinning may skip its
    /// stretch phase ([`crate::gpu::SkinBinding::rigid`]).
    #[must_use]
    pub fn has_scale(&self) -> bool {
        self.has_scale
    }

    /// How many morph targets the clips of skeleton `skeleton` drive: the most morph-weight
    /// tracks of any of its clips ([`crate::Clip::morph_weights`]); 0 when none does.
    #[must_use]
    pub fn morph_targets(&self, skeleton: u32) -> u32 {
        self.skeleton_morph_targets.get(skeleton as usize).copied().unwrap_or(0)
    }

    /// Whether any clip drives morph-target weights: then the sample stage blends them on the GPU.
    #[must_use]
    pub fn has_morph_weights(&self) -> bool {
        self.skeleton_morph_targets.iter().any(|&n| n > 0)
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

    /// State machines over these clips and trees ([`crate::machine`]).
    #[must_use]
    pub fn machines(&self) -> &crate::machine::MachineLibrary {
        &self.machines
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
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `clip`.
    pub fn clip_events(&self, clip: ClipId) -> Result<&[GpuEvent]> {
        let c = self.clip_header(clip)?;
        Ok(&self.events[c.event_offset as usize..(c.event_offset + c.event_count) as usize])
    }

    /// Whether clip `clip` has root motion ([`LibraryBuilder::add_clip_with_root_motion`](crate::LibraryBuilder::add_clip_with_root_motion)).
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `clip`.
    pub fn has_root_motion(&self, clip: ClipId) -> Result<bool> {
        Ok(self.clip_header(clip)?.root_track != NO_ROOT_MOTION)
    }

    /// Whether any clip has root motion (the animator then compiles its stages with it).
    #[must_use]
    pub fn has_root_motion_clips(&self) -> bool {
        self.clips.iter().any(|c| c.root_track != NO_ROOT_MOTION)
    }

    /// The mask called `name`.
    #[must_use]
    pub fn mask_id(&self, name: &str) -> Option<MaskId> {
        self.mask_names
            .iter()
            .position(|n| n == name)
            .map(|k| MaskId::new(k as u32, self.tag))
    }

    /// The clip called `name` of skeleton `skeleton`.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `skeleton`; [`Error::Clip`] when the
    /// skeleton has no clip of that name.
    pub fn clip_id(&self, skeleton: SkeletonId, name: &str) -> Result<ClipId> {
        let s = skeleton.check(self.tag)?;
        self.find_clip(s, name).ok_or_else(|| Error::Clip {
            clip: name.to_string(),
            what: format!(
                "skeleton '{}' has no clip of that name",
                self.skeletons.get(s as usize).map_or("?", Skeleton::name)
            ),
        })
    }

    /// The clip called `name` of skeleton `skeleton` (an index), if there is one.
    pub(crate) fn find_clip(&self, skeleton: u32, name: &str) -> Option<ClipId> {
        (0..self.clips.len())
            .find(|&c| self.clips[c].skeleton == skeleton && self.clip_names[c] == name)
            .map(|c| ClipId::new(c as u32, self.tag))
    }

    /// The skeleton a clip animates.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `clip`.
    pub fn clip_skeleton(&self, clip: ClipId) -> Result<SkeletonId> {
        Ok(SkeletonId::new(self.clip_header(clip)?.skeleton, self.tag))
    }

    /// Duration of a clip in seconds.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `clip`.
    pub fn clip_duration(&self, clip: ClipId) -> Result<f32> {
        Ok(self.clip_header(clip)?.duration)
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
    /// [`crate::layout::INTERP_PACKED`] names its clip's blob by its first word here. Each blob
    /// starts at a multiple of 4 words ([`PACKED_BLOB_ALIGN`]), so that on the GPU, where the
    /// packed section starts a 16-byte unit, a track's six-word clip range lies in two units.
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

    /// Whether the sample stage reads this library as packed clips only (`PACKED_ONLY`,
    /// [`crate::shaders::library_defs`]): [`AnimationLibrary::samples_packed_only`], and no
    /// morph-weight tracks (raw keys, which need the raw sampler). It then reads each clip joint's
    /// three channels as one unit of words (`GpuLibraryLayout::joint_tracks`).
    #[must_use]
    pub fn gpu_samples_packed_only(&self) -> bool {
        self.samples_packed_only() && !self.has_morph_weights()
    }

    /// Per clip, the track (an index into [`AnimationLibrary::tracks`]) whose key times the
    /// sample stage searches once per character and blend-list sample: the clip's first raw
    /// joint track of more than one key, or its first track when it has none.
    #[must_use]
    pub fn clip_key_tracks(&self) -> &[u32] {
        &self.clip_key_tracks
    }

    /// [`AnimationLibrary::clip_key_tracks`], found.
    pub(crate) fn find_clip_key_tracks(&self) -> Vec<u32> {
        self.clips
            .iter()
            .map(|c| {
                let first = c.track_offset as usize;
                let tracks = &self.tracks[first..first + 3 * c.joint_count as usize];
                let k = tracks.iter().position(keyed_raw).unwrap_or(0);
                c.track_offset + k as u32
            })
            .collect()
    }

    /// Whether, in every clip, each raw joint track of more than one key is keyed at the times of
    /// the clip's key track ([`AnimationLibrary::clip_key_tracks`]), as a take exported at one
    /// rate is: the sample stage then finds a clip's keys once per character and sample rather
    /// than per track (`CLIP_TIMES`, [`crate::shaders::library_defs`]). The library keeps one
    /// copy of each distinct time array, so tracks keyed at the same times have the same offset
    /// and count. False for a library without such a track (nothing to search).
    #[must_use]
    pub fn clips_share_key_times(&self) -> bool {
        let searched = self.clips.iter().any(|c| {
            let first = c.track_offset as usize;
            self.tracks[first..first + 3 * c.joint_count as usize]
                .iter()
                .any(keyed_raw)
        });
        searched
            && self.clips.iter().zip(&self.clip_key_tracks).all(|(c, &k)| {
                let first = c.track_offset as usize;
                let reference = &self.tracks[k as usize];
                self.tracks[first..first + 3 * c.joint_count as usize]
                    .iter()
                    .filter(|t| keyed_raw(t))
                    .all(|t| (t.time_offset, t.key_count) == (reference.time_offset, reference.key_count))
            })
    }

    /// The report of every clip the builder compressed ([`LibraryBuilder::set_compression`](crate::LibraryBuilder::set_compression)).
    #[must_use]
    pub fn compression_reports(&self) -> &[(ClipId, crate::codec::ClipReport)] {
        &self.reports
    }
}
