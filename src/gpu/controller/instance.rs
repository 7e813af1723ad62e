//! An [`InstanceDesc`] checked against the library and turned into the instance and the first
//! clock the GPU reads.

use super::{Controller, check_params};
use crate::error::{Error, Result};
use crate::gpu::{InstanceDesc, LoopMode, Skinning};
use crate::id::{BlendTreeId, ClipId};
use crate::layout::{GpuClock, GpuInstance, GpuLayer, LOOP_FOREVER, LOOP_ONCE, LOOP_REPEAT, MAX_LAYERS, source_kind};
use crate::math::Affine;
use glam::Vec4;

impl Controller {
    /// Whether instances may skin with dual quaternions: the animator keeps them
    /// ([`crate::gpu::AnimatorDesc::dual_quaternion`]).
    #[must_use]
    pub fn dual_quaternion(&self) -> bool {
        self.dual_quaternion
    }

    /// Whether the animator keeps room for inertialized transitions
    /// ([`crate::gpu::AnimatorDesc::inertialization`]).
    #[must_use]
    pub fn inertialization(&self) -> bool {
        self.inertialization
    }

    pub(crate) fn keep_velocities(&mut self, on: bool) {
        self.inertialization = on;
    }

    /// Whether the animator's characters may play layers ([`crate::gpu::AnimatorDesc::layers`]).
    #[must_use]
    pub fn layers(&self) -> bool {
        self.layers
    }

    pub(crate) fn allow_layers(&mut self, on: bool) {
        self.layers = on;
    }

    pub(crate) fn keep_dual_quaternions(&mut self, on: bool) {
        self.dual_quaternion = on;
    }

    /// `skinning`'s dual-quaternion amount for instance `index`, checked: a blend amount in
    /// `[0, 1]`, and dual quaternions only where the animator keeps them.
    fn dual_amount(&self, index: usize, skinning: Skinning) -> Result<f32> {
        let amount = skinning.dual_amount().ok_or_else(|| Error::Instance {
            instance: index,
            what: format!("{skinning:?}: a blend amount must be finite and within [0, 1]"),
        })?;
        if amount > 0.0 && !self.dual_quaternion {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "{skinning:?} needs dual quaternions, and the animator keeps none \
                     (make it with AnimatorDesc::dual_quaternion)"
                ),
            });
        }
        Ok(amount)
    }

    /// Sets how instance `index`'s vertices are skinned, from the next frame on, without
    /// touching anything else.
    ///
    /// Errors (nothing changes): an instance that does not exist, a blend amount that is not
    /// finite or outside `[0, 1]`, anything but [`Skinning::Linear`] on an animator that keeps no
    /// dual quaternions.
    pub fn set_skinning(&mut self, index: usize, skinning: Skinning) -> Result<()> {
        if index >= self.instances.len() {
            return Err(Error::Instance {
                instance: index,
                what: format!("does not exist ({} instances)", self.instances.len()),
            });
        }
        let amount = self.dual_amount(index, skinning)?;
        // The frame's previous positions skin as the frame before did; the next frame's as this
        // one (`settle_skinning`).
        if self.skinning_marked.len() <= index {
            self.skinning_marked.resize(index + 1, false);
        }
        let first_change = !self.skinning_marked[index];
        self.edit_both(index, |inst| {
            if first_change {
                inst.previous_dual_quaternion = inst.dual_quaternion;
            }
            inst.dual_quaternion = amount;
        });
        if first_change {
            self.skinning_changed.push(index);
            self.skinning_marked[index] = true;
        }
        Ok(())
    }

    /// At a frame's start: the instances whose skinning changed for the last frame now skin
    /// their previous pose as they skin (their previous amount is their amount), and those
    /// changed for this frame wait for the next.
    pub(super) fn settle_skinning(&mut self) {
        for index in std::mem::take(&mut self.skinning_settling) {
            if index < self.instances.len() {
                self.edit_both(index, |inst| inst.previous_dual_quaternion = inst.dual_quaternion);
            }
        }
        for &index in &self.skinning_changed {
            self.skinning_marked[index] = false;
        }
        self.skinning_settling = std::mem::take(&mut self.skinning_changed);
    }

    /// Instance `index`'s dual-quaternion amount: 0 linear blend skinning, 1 dual quaternions,
    /// between a blend of the two; `None` for an instance that does not exist.
    #[must_use]
    pub fn dual_quaternion_amount(&self, index: usize) -> Option<f32> {
        self.instances.get(index).map(|i| i.dual_quaternion)
    }

    /// Target fields of `desc`: (clip, skeleton, joint count, tree offset, tree nodes). The
    /// skeleton is the one that plays it ([`InstanceDesc::skeleton`]; with `None`, instance
    /// `index`'s own when it is retargeted from the state's skeleton, else the state's).
    pub(super) fn target(&self, index: usize, desc: &InstanceDesc) -> Result<(u32, u32, u32, u32, u32)> {
        let (clip, skeleton, joints, tree_offset, tree_nodes) = match desc.tree {
            Some(tree) => self.tree_target(index, tree)?,
            None => self.clip_target(index, desc.clip)?,
        };
        let on = match desc.skeleton {
            Some(s) => s.check(self.library.tag())?,
            None => self
                .instances
                .get(index)
                .map(|i| i.skeleton)
                .filter(|&k| self.library.plays_on(skeleton, k))
                .unwrap_or(skeleton),
        };
        if on == skeleton {
            return Ok((clip, skeleton, joints, tree_offset, tree_nodes));
        }
        let names = self.library.skeletons();
        let name = |k: u32| names.get(k as usize).map_or("?", |s| s.name());
        if !self.library.plays_on(skeleton, on) {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "skeleton {on} '{}' cannot play skeleton {skeleton} '{}''s clips: add it with \
                     LibraryBuilder::add_retargeted_skeleton from that skeleton",
                    name(on),
                    name(skeleton)
                ),
            });
        }
        let joints = self.library.gpu_skeletons()[on as usize].joint_count;
        Ok((clip, on, joints, tree_offset, tree_nodes))
    }

    /// Target fields of blend tree `tree`, as [`Controller::target`]'s.
    pub(super) fn tree_target(&self, index: usize, tree: BlendTreeId) -> Result<(u32, u32, u32, u32, u32)> {
        let blend = self.library.blend();
        let t = blend
            .trees
            .get(tree.check(self.library.tag())? as usize)
            .ok_or_else(|| Error::Instance {
                instance: index,
                what: format!(
                    "blend tree {} does not exist (the library has {})",
                    tree.index(),
                    blend.trees.len()
                ),
            })?;
        let joints = self
            .library()
            .gpu_skeletons()
            .get(t.skeleton as usize)
            .map_or(0, |s| s.joint_count);
        Ok((0, t.skeleton, joints, t.node_offset, t.node_count))
    }

    /// Target fields of clip `clip`, as [`Controller::target`]'s.
    pub(super) fn clip_target(&self, index: usize, clip: ClipId) -> Result<(u32, u32, u32, u32, u32)> {
        let c = self
            .library
            .clips()
            .get(clip.check(self.library.tag())? as usize)
            .ok_or_else(|| Error::Instance {
                instance: index,
                what: format!(
                    "clip {} does not exist (the library has {})",
                    clip.index(),
                    self.library.clips().len()
                ),
            })?;
        Ok((clip.index(), c.skeleton, c.joint_count, 0, 0))
    }

    pub(super) fn to_gpu(
        &self,
        index: usize,
        desc: &InstanceDesc,
        joint_offset: u32,
    ) -> Result<(GpuInstance, GpuClock)> {
        let err = |what: String| Error::Instance { instance: index, what };
        let (clip, skeleton, joint_count, tree_offset, tree_nodes) = self.target(index, desc)?;
        if !desc.time.is_finite() || !desc.rate.is_finite() {
            return Err(err(format!("time {} and rate {} must be finite", desc.time, desc.rate)));
        }
        check_params(index, &desc.params)?;
        let w = &desc.world;
        if !super::world_within_reach(w) {
            return Err(err(format!(
                "world matrix must be affine (last row 0 0 0 1) with every element finite and within {:.0e}",
                crate::reach::MAX_REACH
            )));
        }
        let dual_quaternion = self.dual_amount(index, desc.skinning)?;
        let (loop_mode, loop_count) = match desc.loop_mode {
            LoopMode::Once => (LOOP_ONCE, 1),
            LoopMode::Repeat(0) => return Err(err("LoopMode::Repeat needs at least one loop".into())),
            LoopMode::Repeat(n) => (LOOP_REPEAT, n),
            LoopMode::Forever => (LOOP_FOREVER, 0),
        };
        let inst = GpuInstance {
            world: Affine::from_mat4(w),
            clip,
            skeleton,
            joint_offset,
            joint_count,
            rate: desc.rate,
            loop_mode,
            loop_count,
            tint: u32::from_le_bytes(desc.tint),
            params: Vec4::from(desc.params),
            tree_offset,
            tree_nodes,
            seq: 0,
            start_time: desc.time,
            source_clip: 0,
            source_tree_offset: 0,
            source_tree_nodes: 0,
            flags: source_kind::NONE,
            source_rate: 0.0,
            source_loop_mode: LOOP_ONCE,
            source_loop_count: 1,
            transition_duration: 0.0,
            layers: [GpuLayer::default(); MAX_LAYERS as usize],
            layer_seq: 0,
            world_seq: 0,
            root_turn: 0.0,
            dual_quaternion,
            previous_dual_quaternion: dual_quaternion,
            // Morph weights are the instance's own, whatever it plays (`set_morph_weights`).
            morph_offset: self.instances.get(index).map_or(0, |i| i.morph_offset),
            morph_count: self.instances.get(index).map_or(0, |i| i.morph_count),
            ik: 0,
            halflife: 0.0,
            bound_radius: self.bound_radius(skeleton),
            // Its own update rate, whatever it plays (`set_update_rate`).
            update_rate: self.instances.get(index).map_or(0, |i| i.update_rate),
            vat: 0,
            vat_time: 0.0,
            ik_goals: [glam::Vec4::ZERO; crate::layout::MAX_IK_CHAINS as usize],
        };
        let duration = if tree_nodes == 0 {
            self.library.clips()[clip as usize].duration
        } else {
            1.0
        };
        let ct = crate::cpu::start_clip_time(desc.time, loop_mode, loop_count, duration);
        // A clock one state behind the instance: its first frame starts the state, as `play`
        // does, so that an event at the start time fires then.
        let clock = GpuClock {
            time: ct.time,
            loops: ct.loops,
            seq: inst.seq.wrapping_sub(1),
            ..Default::default()
        };
        Ok((inst, clock))
    }
}
