//! Retargeting: one skeleton's clips played by a character of other proportions and joint names,
//! by the project's retargeting method (rotations relative to rest in model space, the retarget
//! root's position scaled by the ratio of the two hip heights).
//!
//! - [`BoneMap`] says which source joint drives each target joint: by name, by the humanoid
//!   profile (the usual names of Mixamo, the CMU takes and the built-in mannequin), or entry by
//!   entry, in code or from a JSON file.
//! - [`Retargeter`] checks a map against the two skeletons and holds what the method needs of
//!   their rests (after any [`RetargetOptions`] rest override).
//! - [`Retargeter::retarget`] turns a clip of the source into a clip of the target, with its
//!   events and curves.
//! - At run time, [`LibraryBuilder::add_retargeted_skeleton`](crate::LibraryBuilder::add_retargeted_skeleton)
//!   adds the target to a library with the same map and options: a character of it plays the
//!   source's clips through [`Retargeter::joint_constants`] in the sample stage, with no copy of
//!   a clip (`InstanceDesc::with_skeleton`).
//!
//! ```
//! use wgpu_anim::mannequin;
//! use wgpu_anim::offline::retarget::{BoneMap, RetargetOptions, Retargeter};
//!
//! let source = mannequin::skeleton();
//! // A target with legs a quarter longer: every joint below the hips moved out.
//! let mut joints: Vec<_> = (0..source.joint_count())
//!     .map(|j| {
//!         let parent = source.parents()[j].map(|p| p as usize);
//!         (source.joint_names()[j].clone(), parent, source.rest_pose()[j])
//!     })
//!     .collect();
//! for joint in ["thigh_l", "calf_l", "foot_l", "thigh_r", "calf_r", "foot_r"] {
//!     let j = source.joint_index(joint).unwrap();
//!     joints[j].2.translation *= 1.25;
//! }
//! let target = wgpu_anim::Skeleton::from_rest_pose("long legs", joints)?;
//!
//! let map = BoneMap::humanoid(&source, &target)?;
//! let retargeter = Retargeter::new(&source, &target, &map, &RetargetOptions::default())?;
//! assert!(retargeter.height_ratio() > 1.1);
//! let walk = mannequin::clips(&source).into_iter().find(|c| c.name == "walk").unwrap();
//! let long_walk = retargeter.retarget(&walk)?;
//! assert_eq!(long_walk.duration, walk.duration);
//!
//! // Or at run time: the target plays the source's clips on the GPU.
//! let mut builder = wgpu_anim::LibraryBuilder::new();
//! let mannequin = builder.add_skeleton(source.clone());
//! let walk_id = builder.add_clip(mannequin, &walk)?;
//! let long_legs = builder.add_retargeted_skeleton(target, mannequin, &map, &RetargetOptions::default())?;
//! let desc = wgpu_anim::InstanceDesc::new(walk_id).with_skeleton(Some(long_legs));
//! # let _ = (builder.build(), desc);
//! # Ok::<(), wgpu_anim::Error>(())
//! ```

use crate::clip::{Clip, Interpolation, JointTrack, Track};
use crate::error::{Error, Result};
use crate::layout::{GpuRetarget, GpuRetargetJoint, RETARGET_ROOT, RETARGET_UNMAPPED};
use crate::math::Affine;
use crate::reference::{self, ClipSampler, TransformF64};
use crate::skeleton::Skeleton;
use glam::{DMat4, DQuat, DVec3, Quat, Vec4};
use std::collections::BTreeMap;

mod goals;
mod humanoid;
pub use goals::{humanoid_feet, humanoid_hands};
pub use humanoid::SLOTS as HUMANOID_SLOTS;

/// Which source joint drives each target joint, by name. At most one source joint per target
/// joint (a map keyed by the target's names); [`Retargeter::new`] checks the rest of the rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoneMap {
    entries: BTreeMap<String, String>,
}

impl BoneMap {
    /// An empty map.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Every target joint whose name the source has too, to that joint (the identity map when
    /// both are one skeleton).
    #[must_use]
    pub fn by_name(source: &Skeleton, target: &Skeleton) -> Self {
        let mut map = Self::new();
        for name in target.joint_names() {
            if source.joint_index(name).is_some() {
                map.set(name, name);
            }
        }
        map
    }

    /// The humanoid profile: each of [`HUMANOID_SLOTS`] (hips, spine, neck, head, arms, legs)
    /// that both skeletons have, their joints recognised by the usual names of Mixamo (with any
    /// `prefix:`), the CMU takes or the built-in mannequin. Fingers and helper joints stay
    /// unmapped (they keep their rest); add them with [`BoneMap::set`].
    ///
    /// # Errors
    /// [`Error::Retarget`] when a skeleton follows none of those conventions.
    pub fn humanoid(source: &Skeleton, target: &Skeleton) -> Result<Self> {
        let unknown = |s: &Skeleton| {
            retarget_error(
                source,
                target,
                format!(
                    "skeleton '{}' has none of the humanoid profile's names (Mixamo's `Hips`, the CMU takes' \
                     `LowerBack`, the mannequin's `spine_01`): give the bone map entry by entry",
                    s.name()
                ),
            )
        };
        let (_, from) = humanoid::slots(source).ok_or_else(|| unknown(source))?;
        let (_, to) = humanoid::slots(target).ok_or_else(|| unknown(target))?;
        let mut map = Self::new();
        for (s, t) in from.iter().zip(to) {
            if let (Some(s), Some(t)) = (s, t) {
                map.set(&target.joint_names()[t], &source.joint_names()[*s]);
            }
        }
        Ok(map)
    }

    /// Maps target joint `target` to source joint `source`, replacing any entry it had.
    pub fn set(&mut self, target: &str, source: &str) -> &mut Self {
        self.entries.insert(target.to_owned(), source.to_owned());
        self
    }

    /// Leaves target joint `target` unmapped (it keeps its rest rotation).
    pub fn remove(&mut self, target: &str) -> &mut Self {
        self.entries.remove(target);
        self
    }

    /// The source joint that drives target joint `target`.
    #[must_use]
    pub fn source_of(&self, target: &str) -> Option<&str> {
        self.entries.get(target).map(String::as_str)
    }

    /// The entries, `(target, source)`, in the target names' order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(t, s)| (t.as_str(), s.as_str()))
    }

    /// How many target joints are mapped.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no joint is mapped.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Applies a JSON map file's entries over this map: an object from target joint names to a
    /// source joint name, or `null` to leave that target joint unmapped.
    ///
    /// ```
    /// # use wgpu_anim::offline::retarget::BoneMap;
    /// let mut map = BoneMap::new();
    /// map.set("Neck1", "neck");
    /// map.apply_json("map.json", r#"{ "Hips": "pelvis", "Neck1": null }"#)?;
    /// assert_eq!(map.source_of("Hips"), Some("pelvis"));
    /// assert_eq!(map.source_of("Neck1"), None);
    /// # Ok::<(), wgpu_anim::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Asset`] naming `file` when the text is not such an object; the map is unchanged.
    #[cfg(feature = "json")]
    pub fn apply_json(&mut self, file: &str, text: &str) -> Result<()> {
        let entries: BTreeMap<String, Option<String>> = serde_json::from_str(text).map_err(|e| Error::Asset {
            file: file.to_owned(),
            what: format!("not a bone map (an object from target joint names to a source joint name or null): {e}"),
        })?;
        for (target, source) in entries {
            match source {
                Some(source) => self.set(&target, &source),
                None => self.remove(&target),
            };
        }
        Ok(())
    }
}

/// Rest overrides and skinned joints of either side (all empty by default: the skeletons' own
/// rests, and every joint counted as skinned).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RetargetOptions {
    /// Local rest rotations replacing the source's (joint name, rotation): turn a T-pose
    /// source's upper arms down to an A-pose target's angle, or its root to the target's facing.
    pub source_rest: Vec<(String, Quat)>,
    /// Local rest rotations replacing the target's.
    pub target_rest: Vec<(String, Quat)>,
    /// The source joints a skin binds (the hip height is measured above the lowest of them);
    /// `None`: every joint.
    pub source_skinned: Option<Vec<usize>>,
    /// The target joints a skin binds; `None`: every joint.
    pub target_skinned: Option<Vec<usize>>,
    /// Stand the source in the rotations of its skin's bind pose rather than its joints' rest
    /// (for a file whose nodes hold a pose, not the bind pose): joints a skin binds
    /// (`source_skinned`, every joint without it) under another such joint turn as the inverse
    /// binds place them; `source_rest` overrides apply after.
    pub source_bind_rest: bool,
    /// As `source_bind_rest`, for the target.
    pub target_bind_rest: bool,
    /// Target joints moved to where their source joints are, relative to the retarget root and
    /// scaled by `h_T / h_S`, by the two-bone IK (the reference's step 4): feet
    /// ([`humanoid_feet`]) so that planted feet stay planted, or hands. Each is the end of a
    /// two-bone chain (its parent and grandparent turn). Offline only.
    pub goals: Vec<String>,
}

impl RetargetOptions {
    /// Overrides the source's local rest rotation of `joint`.
    #[must_use]
    pub fn with_source_rest(mut self, joint: &str, rotation: Quat) -> Self {
        self.source_rest.push((joint.to_owned(), rotation));
        self
    }

    /// Overrides the target's local rest rotation of `joint`.
    #[must_use]
    pub fn with_target_rest(mut self, joint: &str, rotation: Quat) -> Self {
        self.target_rest.push((joint.to_owned(), rotation));
        self
    }

    /// Stands the source in its bind pose's rotations ([`RetargetOptions::source_bind_rest`]).
    #[must_use]
    pub fn with_source_bind_rest(mut self) -> Self {
        self.source_bind_rest = true;
        self
    }

    /// Stands the target in its bind pose's rotations ([`RetargetOptions::target_bind_rest`]).
    #[must_use]
    pub fn with_target_bind_rest(mut self) -> Self {
        self.target_bind_rest = true;
        self
    }

    /// Adds a goal on target joint `end` ([`RetargetOptions::goals`]).
    #[must_use]
    pub fn with_goal(mut self, end: &str) -> Self {
        self.goals.push(end.to_owned());
        self
    }

    /// The source joints a skin binds (a glTF import's `skin_joints`).
    #[must_use]
    pub fn with_source_skinned(mut self, joints: Vec<usize>) -> Self {
        self.source_skinned = Some(joints);
        self
    }

    /// The target joints a skin binds.
    #[must_use]
    pub fn with_target_skinned(mut self, joints: Vec<usize>) -> Self {
        self.target_skinned = Some(joints);
        self
    }
}

fn retarget_error(source: &Skeleton, target: &Skeleton, what: String) -> Error {
    Error::Retarget {
        from: source.name().to_owned(),
        to: target.name().to_owned(),
        what,
    }
}

/// What the method needs of one side's rest (after its overrides).
#[derive(Clone, Debug)]
struct Rest {
    /// Local rest poses, overridden rotations in.
    local: Vec<TransformF64>,
    /// Model-space rest rotations.
    model_rotation: Vec<DQuat>,
    /// Model-space rest matrices.
    model: Vec<DMat4>,
}

impl Rest {
    /// The rest of `skeleton`: its joints' rest, with the rotations of its bind pose where
    /// `bind` names the joints a skin binds (a joint of them under another of them turns as the
    /// inverse binds place it), then `overrides`.
    fn new(
        skeleton: &Skeleton,
        bind: Option<&[usize]>,
        overrides: &[(String, Quat)],
        fail: &dyn Fn(String) -> Error,
    ) -> Result<Self> {
        let mut local: Vec<TransformF64> = skeleton.rest_pose().iter().map(TransformF64::from_transform).collect();
        if let Some(skinned) = bind {
            for (j, rotation) in bind_rotations(skeleton, skinned) {
                local[j].rotation = rotation;
            }
        }
        for (joint, rotation) in overrides {
            let j = skeleton.joint_index(joint).ok_or_else(|| {
                fail(format!(
                    "a rest override names joint '{joint}', which skeleton '{}' does not have",
                    skeleton.name()
                ))
            })?;
            if !rotation.is_finite() || (rotation.length() - 1.0).abs() > 1e-3 {
                return Err(fail(format!(
                    "the rest override of joint '{joint}' of skeleton '{}' is not a unit quaternion: {rotation}",
                    skeleton.name()
                )));
            }
            local[j].rotation = rotation.as_dquat().normalize();
        }
        let model_rotation = model_rotations(skeleton, &local);
        let model = reference::local_to_model(skeleton, &local);
        Ok(Self {
            local,
            model_rotation,
            model,
        })
    }

    /// Joint `j`'s rest height above the lowest of `skinned` (every joint for `None`), along +Y.
    fn height(&self, j: usize, skinned: Option<&[usize]>) -> f64 {
        let y = |k: usize| self.model.get(k).map_or(f64::INFINITY, |m| m.w_axis.y);
        let lowest = match skinned {
            Some(joints) => joints.iter().map(|&k| y(k)).fold(f64::INFINITY, f64::min),
            None => (0..self.model.len()).map(y).fold(f64::INFINITY, f64::min),
        };
        y(j) - lowest
    }
}

/// The local rotations of `skeleton`'s bind pose for each joint of `skinned` whose parent is
/// also in it: the rotation of `bind(parent)⁻¹ · bind(joint)`, `bind` the inverse of a joint's
/// inverse bind matrix (in the mesh's space, which the quotient cancels). Joints whose inverse
/// bind has no inverse are left out.
fn bind_rotations(skeleton: &Skeleton, skinned: &[usize]) -> Vec<(usize, DQuat)> {
    let binds = skeleton.inverse_binds();
    let is_skinned = |j: usize| skinned.contains(&j);
    let bind = |j: usize| {
        let inverse = binds.get(j)?.as_dmat4();
        let det = inverse.determinant();
        (det.is_finite() && det != 0.0).then(|| inverse.inverse())
    };
    skinned
        .iter()
        .filter_map(|&j| {
            let p = skeleton.parents().get(j).copied().flatten()? as usize;
            if !is_skinned(p) {
                return None;
            }
            let relative = bind(p)?.inverse() * bind(j)?;
            let rotation = relative.to_scale_rotation_translation().1.normalize();
            rotation.is_finite().then_some((j, rotation))
        })
        .collect()
}

/// Every joint's model-space rotation from its local pose (parents come first).
fn model_rotations(skeleton: &Skeleton, local: &[TransformF64]) -> Vec<DQuat> {
    let mut model: Vec<DQuat> = Vec::with_capacity(local.len());
    for (j, l) in local.iter().enumerate() {
        let parent = skeleton.parents()[j].map_or(DQuat::IDENTITY, |p| model[p as usize]);
        model.push((parent * l.rotation).normalize());
    }
    model
}

/// Step 2's constants of one mapped target joint ([`Retargeter::joint_constants`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointRetarget {
    /// The source joint that drives it.
    pub source: usize,
    /// The source joint of its nearest mapped ancestor (`None` for the retarget root: the
    /// source's locals from its top joint down).
    pub chain_from: Option<usize>,
    /// `Rm_T(parent, rest)⁻¹ ⊗ Rm_S(chain_from, rest)`.
    pub a: Quat,
    /// `Rm_S(source, rest)⁻¹ ⊗ Rm_T(joint, rest)`.
    pub b: Quat,
}

/// A bone map checked against a source and a target skeleton, with both rests prepared: turns
/// the source's poses and clips into the target's (the reference's steps 1 and 3).
#[derive(Clone, Debug)]
pub struct Retargeter {
    source: Skeleton,
    target: Skeleton,
    /// Per target joint, the source joint that drives it.
    map: Vec<Option<usize>>,
    /// The retarget root (target joint).
    root: usize,
    source_rest: Rest,
    target_rest: Rest,
    /// Target joints whose rest rotation an override changed, and the goals' chains (they get a
    /// track of their own).
    target_overridden: Vec<usize>,
    /// `h_T / h_S`.
    ratio: f64,
    /// Step 4's goals.
    goals: Vec<goals::Goal>,
}

impl Retargeter {
    /// Checks `map` against the two skeletons and prepares their rests (after `options`'
    /// overrides).
    ///
    /// # Errors
    /// [`Error::Retarget`] naming the joints when the map names a joint a skeleton does not have,
    /// maps two target joints to one source joint, crosses (a mapped target joint's nearest
    /// mapped ancestor maps to a source joint that is not a strict ancestor of its own), has no
    /// retarget root or two (mapped joints without a mapped ancestor), when an override names a
    /// missing joint or is not a unit quaternion, or when either root stands no higher than its
    /// lowest skinned joint (no height to scale by).
    pub fn new(source: &Skeleton, target: &Skeleton, map: &BoneMap, options: &RetargetOptions) -> Result<Self> {
        let fail = |what: String| retarget_error(source, target, what);
        let (by_target, root) = check_map(source, target, map, &fail)?;
        let bind = |on: bool, skinned: &Option<Vec<usize>>, skeleton: &Skeleton| {
            on.then(|| skinned.clone().unwrap_or_else(|| (0..skeleton.joint_count()).collect()))
        };
        let source_bind = bind(options.source_bind_rest, &options.source_skinned, source);
        let target_bind = bind(options.target_bind_rest, &options.target_skinned, target);
        let source_rest = Rest::new(source, source_bind.as_deref(), &options.source_rest, &fail)?;
        let target_rest = Rest::new(target, target_bind.as_deref(), &options.target_rest, &fail)?;
        for (skeleton, skinned) in [(source, &options.source_skinned), (target, &options.target_skinned)] {
            if let Some(&bad) = skinned.iter().flatten().find(|&&k| k >= skeleton.joint_count()) {
                return Err(fail(format!(
                    "skinned joint {bad} is out of range: skeleton '{}' has {} joints",
                    skeleton.name(),
                    skeleton.joint_count()
                )));
            }
        }
        let source_root = by_target[root].unwrap_or_default();
        let h_s = source_rest.height(source_root, options.source_skinned.as_deref());
        let h_t = target_rest.height(root, options.target_skinned.as_deref());
        for (h, skeleton, joint) in [(h_s, source, source_root), (h_t, target, root)] {
            if !(h.is_finite() && h > 0.0) {
                return Err(fail(format!(
                    "retarget root '{}' of skeleton '{}' stands {h} above its lowest skinned joint: no height to scale by",
                    skeleton.joint_names()[joint],
                    skeleton.name()
                )));
            }
        }
        let mut target_overridden: Vec<usize> = options
            .target_rest
            .iter()
            .filter_map(|(name, _)| target.joint_index(name))
            .collect();
        let goals = options
            .goals
            .iter()
            .map(|end| goals::Goal::new(target, &by_target, end, &fail))
            .collect::<Result<Vec<_>>>()?;
        target_overridden.extend(goals.iter().flat_map(|g| g.joints()));
        if let Some(skinned) = &target_bind {
            target_overridden.extend(bind_rotations(target, skinned).into_iter().map(|(j, _)| j));
        }
        target_overridden.sort_unstable();
        target_overridden.dedup();
        Ok(Self {
            source: source.clone(),
            target: target.clone(),
            map: by_target,
            root,
            source_rest,
            target_rest,
            target_overridden,
            ratio: h_t / h_s,
            goals,
        })
    }

    /// The retarget root: (target joint, source joint).
    #[must_use]
    pub fn retarget_root(&self) -> (usize, usize) {
        (self.root, self.map[self.root].unwrap_or_default())
    }

    /// `h_T / h_S`: the ratio of the two roots' rest heights that scales the root's position.
    #[must_use]
    pub fn height_ratio(&self) -> f64 {
        self.ratio
    }

    /// The source joint that drives target joint `target_joint`.
    #[must_use]
    pub fn source_of(&self, target_joint: usize) -> Option<usize> {
        self.map.get(target_joint).copied().flatten()
    }

    /// The target's local pose for the source's local pose `source` (one entry per source
    /// joint; joints past its end hold the source's rest): mapped joints turn in model space as
    /// their source joints turn from their rest, unmapped ones keep their (overridden) rest,
    /// every translation is the target's rest except the retarget root's, the source root's
    /// model-space position times [`Self::height_ratio`]; then each of the options' goals moves
    /// its chain's end after its source joint ([`RetargetOptions::goals`]).
    #[must_use]
    pub fn target_pose(&self, source: &[TransformF64]) -> Vec<TransformF64> {
        let rest = self.source.rest_pose();
        let source: Vec<TransformF64> = (0..self.source.joint_count())
            .map(|j| {
                source
                    .get(j)
                    .copied()
                    .unwrap_or_else(|| TransformF64::from_transform(&rest[j]))
            })
            .collect();
        let source_rotation = model_rotations(&self.source, &source);
        let source_model = reference::local_to_model(&self.source, &source);
        let mut pose = self.target_rest.local.clone();
        let mut model: Vec<DQuat> = Vec::with_capacity(pose.len());
        for (j, local) in pose.iter_mut().enumerate() {
            let parent = self.target.parents()[j].map_or(DQuat::IDENTITY, |p| model[p as usize]);
            let rotation = match self.map[j] {
                Some(s) => {
                    let turn = source_rotation[s] * self.source_rest.model_rotation[s].inverse();
                    (turn * self.target_rest.model_rotation[j]).normalize()
                }
                None => (parent * local.rotation).normalize(),
            };
            local.rotation = (parent.inverse() * rotation).normalize();
            model.push(rotation);
        }
        let source_root = self.map[self.root].unwrap_or_default();
        let position: DVec3 = source_model[source_root].w_axis.truncate() * self.ratio;
        let parent = self.target.parents()[self.root].map_or(DMat4::IDENTITY, |p| self.target_rest.model[p as usize]);
        pose[self.root].translation = parent.inverse().transform_point3(position);
        goals::solve(
            &self.target,
            &self.target_rest.model,
            &self.goals,
            &mut pose,
            &source_model,
            (self.root, source_root),
            self.ratio,
        );
        pose
    }

    /// Step 2's constants, one per target joint (`None` unmapped): a mapped joint's local
    /// rotation at any time is `a ⊗ L ⊗ b`, `L` the source's local rotations multiplied from the
    /// child of [`JointRetarget::chain_from`] down to [`JointRetarget::source`]. What a run-time
    /// retarget needs of a skeleton pair: two quaternion products per joint, no baked clip.
    #[must_use]
    pub fn joint_constants(&self) -> Vec<Option<JointRetarget>> {
        (0..self.map.len())
            .map(|j| {
                let s = self.map[j]?;
                let mut ancestor = self.target.parents()[j].map(|p| p as usize);
                while let Some(a) = ancestor {
                    if self.map[a].is_some() {
                        break;
                    }
                    ancestor = self.target.parents()[a].map(|p| p as usize);
                }
                let chain_from = ancestor.and_then(|a| self.map[a]);
                let above = chain_from.map_or(DQuat::IDENTITY, |p| self.source_rest.model_rotation[p]);
                let parent =
                    self.target.parents()[j].map_or(DQuat::IDENTITY, |p| self.target_rest.model_rotation[p as usize]);
                let a = parent.inverse() * above;
                let b = self.source_rest.model_rotation[s].inverse() * self.target_rest.model_rotation[j];
                Some(JointRetarget {
                    source: s,
                    chain_from,
                    a: a.normalize().as_quat(),
                    b: b.normalize().as_quat(),
                })
            })
            .collect()
    }

    /// The run-time form of this retarget as the library heap holds it
    /// ([`crate::LibraryBuilder::add_retargeted_skeleton`]): [`Self::joint_constants`] per
    /// target joint (an unmapped one's rest rotation after any override in `a`), and what takes
    /// the source root's model-space position to the retarget root's local translation.
    /// `source` and `source_joints` name the source skeleton in the library.
    pub(crate) fn gpu_table(&self, source: u32, source_joints: u32) -> GpuRetarget {
        let joints = self
            .joint_constants()
            .into_iter()
            .enumerate()
            .map(|(j, c)| match c {
                Some(c) => GpuRetargetJoint {
                    a: Vec4::from(c.a),
                    b: Vec4::from(c.b),
                    source: c.source as u32,
                    links: self.links(c.source, c.chain_from),
                    flags: if j == self.root { RETARGET_ROOT } else { 0 },
                    _pad: 0,
                },
                None => GpuRetargetJoint {
                    a: Vec4::from(self.target_rest.local[j].rotation.as_quat()),
                    b: Vec4::W,
                    source: RETARGET_UNMAPPED,
                    links: 0,
                    flags: 0,
                    _pad: 0,
                },
            })
            .collect();
        let parent = self.target.parents()[self.root].map_or(DMat4::IDENTITY, |p| self.target_rest.model[p as usize]);
        let root_from_source = parent.inverse() * DMat4::from_scale(DVec3::splat(self.ratio));
        GpuRetarget {
            source,
            source_joints,
            ratio: self.ratio as f32,
            root_from_source: Affine::from_mat4(&root_from_source.as_mat4()),
            joints,
        }
    }

    /// How many source joints a chain multiplies, from `source` up to the child of `chain_from`
    /// (to the top for `None`).
    fn links(&self, source: usize, chain_from: Option<usize>) -> u32 {
        let mut links = 0;
        let mut k = Some(source);
        while let Some(x) = k.filter(|&x| Some(x) != chain_from) {
            links += 1;
            k = self.source.parents()[x].map(|p| p as usize);
        }
        links
    }

    /// The target's local rotations by step 2 (f32, as a run-time retarget computes them) for
    /// the source's local rotations `source`: `a ⊗ L ⊗ b` for mapped joints, the (overridden)
    /// rest for the others. Agrees with [`Self::target_pose`]'s rotations within 1e-5 rad.
    #[must_use]
    pub fn target_rotations(&self, constants: &[Option<JointRetarget>], source: &[Quat]) -> Vec<Quat> {
        constants
            .iter()
            .enumerate()
            .map(|(j, c)| match c {
                None => self
                    .target_rest
                    .local
                    .get(j)
                    .map_or(Quat::IDENTITY, |l| l.rotation.as_quat()),
                Some(c) => {
                    let mut chain = Quat::IDENTITY;
                    let mut k = Some(c.source);
                    while let Some(x) = k.filter(|&x| Some(x) != c.chain_from) {
                        chain = source.get(x).copied().unwrap_or(Quat::IDENTITY) * chain;
                        k = self.source.parents().get(x).copied().flatten().map(|p| p as usize);
                    }
                    (c.a * chain * c.b).normalize()
                }
            })
            .collect()
    }

    /// `clip`, a clip of the source skeleton, as a clip of the target: a rotation track for each
    /// mapped joint (and each whose rest an override turned), a translation track for the
    /// retarget root, keyed at every key time of the source's tracks (three more keys between
    /// each two where a source track is a cubic spline; step keys where every source track
    /// steps), with the clip's name, duration, looping, events and curves. Morph weights stay
    /// behind: they belong to the source's meshes.
    ///
    /// # Errors
    /// [`Error::Clip`] or [`Error::Track`] when `clip` does not validate against the source.
    pub fn retarget(&self, clip: &Clip) -> Result<Clip> {
        clip.validate(&self.source)?;
        let tracks: Vec<&JointTrack> = clip
            .tracks
            .iter()
            .filter(|t| self.source.joint_index(&t.joint).is_some())
            .collect();
        let interpolations: Vec<Interpolation> = tracks
            .iter()
            .flat_map(|t| {
                [
                    t.translation.as_ref().map(|k| k.interpolation),
                    t.rotation.as_ref().map(|k| k.interpolation),
                    t.scale.as_ref().map(|k| k.interpolation),
                ]
            })
            .flatten()
            .collect();
        let step = !interpolations.is_empty() && interpolations.iter().all(|&i| i == Interpolation::Step);
        let cubic = interpolations.contains(&Interpolation::CubicSpline);
        let times = key_times(&tracks, clip.duration, if cubic { 4 } else { 1 });
        let sampler = ClipSampler::new(&self.source, clip);
        let poses: Vec<Vec<TransformF64>> = times
            .iter()
            .map(|&t| self.target_pose(&sampler.sample(f64::from(t))))
            .collect();
        let interpolation = if step {
            Interpolation::Step
        } else {
            Interpolation::Linear
        };
        let mut out = Vec::new();
        for j in 0..self.target.joint_count() {
            let rotates = self.map[j].is_some() || self.target_overridden.binary_search(&j).is_ok();
            let translates = j == self.root;
            if !rotates && !translates {
                continue;
            }
            let mut previous = Quat::IDENTITY;
            let rotation = rotates.then(|| {
                let values = poses
                    .iter()
                    .map(|p| {
                        let mut q = p[j].rotation.as_quat();
                        if q.dot(previous) < 0.0 {
                            q = -q;
                        }
                        previous = q;
                        q
                    })
                    .collect();
                Track {
                    interpolation,
                    times: times.clone(),
                    values,
                }
            });
            let translation = translates.then(|| Track {
                interpolation,
                times: times.clone(),
                values: poses.iter().map(|p| p[j].translation.as_vec3()).collect(),
            });
            out.push(JointTrack {
                joint: self.target.joint_names()[j].clone(),
                translation,
                rotation,
                scale: None,
            });
        }
        let mut retargeted = clip.clone();
        retargeted.tracks = out;
        retargeted.morph_weights = Vec::new();
        retargeted.validate(&self.target)?;
        Ok(retargeted)
    }
}

/// The sorted key times of `tracks`, with 0 and `duration`, each interval cut into `cuts`.
fn key_times(tracks: &[&JointTrack], duration: f32, cuts: u32) -> Vec<f32> {
    let mut keys: Vec<f32> = vec![0.0, duration.max(0.0)];
    for t in tracks {
        for times in [
            t.translation.as_ref().map(|k| &k.times),
            t.rotation.as_ref().map(|k| &k.times),
            t.scale.as_ref().map(|k| &k.times),
        ]
        .into_iter()
        .flatten()
        {
            keys.extend(times.iter().copied().filter(|t| t.is_finite()));
        }
    }
    keys.sort_by(f32::total_cmp);
    keys.dedup();
    if cuts <= 1 {
        return keys;
    }
    let mut out = Vec::with_capacity(keys.len() * cuts as usize);
    for pair in keys.windows(2) {
        for k in 0..cuts {
            out.push(pair[0] + (pair[1] - pair[0]) * k as f32 / cuts as f32);
        }
    }
    out.extend(keys.last());
    out.dedup();
    out
}

/// The reference's rules for a bone map: names exist, one target joint per source joint, no
/// crossing, exactly one retarget root. Returns the map per target joint and the root.
fn check_map(
    source: &Skeleton,
    target: &Skeleton,
    map: &BoneMap,
    fail: &dyn Fn(String) -> Error,
) -> Result<(Vec<Option<usize>>, usize)> {
    let mut by_target = vec![None; target.joint_count()];
    let mut owner: BTreeMap<usize, &str> = BTreeMap::new();
    for (t_name, s_name) in map.iter() {
        let t = target.joint_index(t_name).ok_or_else(|| {
            fail(format!(
                "the bone map names target joint '{t_name}', which skeleton '{}' does not have",
                target.name()
            ))
        })?;
        let s = source.joint_index(s_name).ok_or_else(|| {
            fail(format!(
                "the bone map maps target joint '{t_name}' to '{s_name}', which source skeleton '{}' does not have",
                source.name()
            ))
        })?;
        if let Some(other) = owner.insert(s, t_name) {
            return Err(fail(format!(
                "target joints '{other}' and '{t_name}' both map to source joint '{s_name}'"
            )));
        }
        by_target[t] = Some(s);
    }
    let mut roots = Vec::new();
    for (t, s) in by_target.iter().enumerate() {
        let Some(s) = *s else { continue };
        let mut ancestor = target.parents()[t].map(|p| p as usize);
        while let Some(a) = ancestor {
            if by_target[a].is_some() {
                break;
            }
            ancestor = target.parents()[a].map(|p| p as usize);
        }
        match ancestor {
            None => roots.push(t),
            Some(a) => {
                let sa = by_target[a].unwrap_or_default();
                if s == sa || !source.is_descendant(s, sa) {
                    let (tn, an) = (&target.joint_names()[t], &target.joint_names()[a]);
                    let (sn, san) = (&source.joint_names()[s], &source.joint_names()[sa]);
                    return Err(fail(format!(
                        "the bone map crosses: target joint '{tn}' lies below '{an}', but its source joint '{sn}' \
                         does not lie below '{san}' (the source of '{an}')"
                    )));
                }
            }
        }
    }
    match roots.as_slice() {
        [] => Err(fail(
            "the bone map maps no joint: it needs one retarget root (the hips)".to_owned(),
        )),
        [root] => Ok((by_target, *root)),
        [a, b, ..] => Err(fail(format!(
            "two retarget roots: target joints '{}' and '{}' are both mapped with no mapped ancestor (a map has one, \
             the hips)",
            target.joint_names()[*a],
            target.joint_names()[*b]
        ))),
    }
}
