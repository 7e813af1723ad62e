//! Each instance's IK goals ([`IkGoal`]), written into its instance when they change, and the
//! shared look-at point, written with the frame.

use super::Controller;
use crate::error::{Error, Result};
use crate::ik::{IkGoal, IkKind, IkTarget};
use crate::layout::{IK_ON, ik_target};
use glam::Vec3;

/// The largest coordinate a target may have: the reach of a pose ([`crate::reach::MAX_REACH`]).
const MAX_TARGET: f32 = crate::reach::MAX_REACH as f32;

fn point_ok(p: Vec3) -> bool {
    p.is_finite() && p.abs().max_element() <= MAX_TARGET
}

impl Controller {
    /// Gives instance `index` a goal for chain `chain` of its skeleton
    /// ([`crate::Skeleton::add_ik_chain`]), or takes it away (`None`). From the next frame on,
    /// the IK stage corrects the chain's joints toward the target after the pose is propagated,
    /// every frame, on the GPU; nothing is written again until the goal changes (a
    /// [`IkTarget::LookAt`] goal follows [`Controller::set_look_at`], a [`IkTarget::Ground`] goal
    /// the ground under the foot, a [`IkTarget::World`] goal the character's root motion).
    ///
    /// Errors (nothing changes): an instance that does not exist, a chain its skeleton lacks, a
    /// target that is not finite or beyond [`crate::reach::MAX_REACH`], a weight that is not in
    /// [0, 1], a ground goal for an aim chain.
    pub fn set_ik_goal(&mut self, index: usize, chain: usize, goal: Option<IkGoal>) -> Result<()> {
        let err = |what: String| Error::Instance { instance: index, what };
        if index >= self.instances.len() {
            return Err(err(format!("does not exist ({} instances)", self.instances.len())));
        }
        let skeleton = &self.library.skeletons[self.instances[index].skeleton as usize];
        let Some(c) = skeleton.ik_chains().get(chain) else {
            return Err(err(format!(
                "IK chain {chain} does not exist: skeleton '{}' has {}",
                skeleton.name(),
                skeleton.ik_chains().len()
            )));
        };
        let word = match goal {
            None => {
                let bits = !(IK_ON << chain) & !(3 << (8 + 2 * chain));
                self.edit_both(index, |inst| inst.ik &= bits);
                return Ok(());
            }
            Some(g) => g,
        };
        if !(0.0..=1.0).contains(&word.weight) {
            return Err(err(format!(
                "IK chain '{}': weight {} is outside [0, 1]",
                c.name, word.weight
            )));
        }
        let (kind, point) = match word.target {
            IkTarget::Model(p) => (ik_target::MODEL, p),
            IkTarget::World(p) => (ik_target::WORLD, p),
            IkTarget::LookAt => (ik_target::LOOK_AT, Vec3::ZERO),
            IkTarget::Ground => (ik_target::GROUND, Vec3::ZERO),
        };
        if !point_ok(point) {
            return Err(err(format!(
                "IK chain '{}': target {point} must be finite and within {MAX_TARGET:e}",
                c.name
            )));
        }
        if kind == ik_target::GROUND && matches!(c.kind, IkKind::Aim(_)) {
            return Err(err(format!(
                "IK chain '{}' aims: only a two-bone chain plants on the ground",
                c.name
            )));
        }
        let (shift, weight) = (8 + 2 * chain, word.weight);
        self.edit_both(index, |inst| {
            inst.ik = (inst.ik & !(3 << shift)) | IK_ON << chain | kind << shift;
            inst.ik_goals[chain] = point.extend(weight);
        });
        Ok(())
    }

    /// Instance `index`'s goal for chain `chain`, or `None` when it has none (or there is no
    /// such instance or chain).
    #[must_use]
    pub fn ik_goal(&self, index: usize, chain: usize) -> Option<IkGoal> {
        let inst = self.instances.get(index)?;
        if chain >= crate::ik::MAX_IK_CHAINS || inst.ik & (IK_ON << chain) == 0 {
            return None;
        }
        let g = inst.ik_goals[chain];
        let target = match (inst.ik >> (8 + 2 * chain)) & 3 {
            ik_target::MODEL => IkTarget::Model(g.truncate()),
            ik_target::WORLD => IkTarget::World(g.truncate()),
            ik_target::LOOK_AT => IkTarget::LookAt,
            _ => IkTarget::Ground,
        };
        Some(IkGoal { target, weight: g.w })
    }

    /// Moves the shared point of every [`IkTarget::LookAt`] goal, in the world: 16 bytes of the
    /// next frame's uniform, however many characters look.
    ///
    /// Errors (nothing changes): a point that is not finite or beyond
    /// [`crate::reach::MAX_REACH`].
    pub fn set_look_at(&mut self, point: Vec3) -> Result<()> {
        if !point_ok(point) {
            return Err(Error::Limit {
                what: format!("the look-at point {point} must be finite and within {MAX_TARGET:e}"),
            });
        }
        self.look_at = point;
        Ok(())
    }

    /// The shared look-at point ([`Controller::set_look_at`]).
    #[must_use]
    pub fn look_at(&self) -> Vec3 {
        self.look_at
    }
}
