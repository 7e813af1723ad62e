//! Where instances are: their world matrices, and root motion moving them on the GPU.

use super::Controller;
use crate::error::{Error, Result};
use crate::layout::ROOT_MOTION;
use crate::math::Affine;
use glam::Mat4;

impl Controller {
    /// Turns root motion on or off for instance `index`. On, the clock stage moves its world
    /// transform each frame by the root displacement of the clips it plays (those built with
    /// [`LibraryBuilder::add_clip_with_root_motion`](crate::LibraryBuilder::add_clip_with_root_motion);
    /// the others stand still), starting from the world the CPU last set: the world then lives on
    /// the GPU, the CPU does not know it (read it back with `Animator::watch_outputs`).
    /// [`Controller::set_world`] still places the character (a teleport, from which root motion
    /// carries on); nothing else the CPU uploads moves it. Off, the world is the CPU's again: the
    /// character returns to where the CPU last set it, unless you set it from a read-back first.
    ///
    /// Errors: an instance that does not exist; a library without a clip with root motion (its
    /// stages are built without it, [`crate::shaders::library_defs`]).
    pub fn set_root_motion(&mut self, index: usize, on: bool) -> Result<()> {
        let inst = self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: "does not exist".into(),
        })?;
        if on && !self.library.has_root_motion_clips() {
            return Err(Error::Instance {
                instance: index,
                what: "cannot move by root motion: no clip of the library has any".into(),
            });
        }
        let was = inst.flags & ROOT_MOTION != 0;
        if was == on {
            return Ok(());
        }
        self.world_seq = self.world_seq.wrapping_add(1);
        let seq = self.world_seq;
        self.edit_both(index, |inst| {
            inst.flags ^= ROOT_MOTION;
            inst.world_seq = seq;
        });
        if on {
            self.root_motion_count += 1;
        } else {
            self.root_motion_count -= 1;
        }
        Ok(())
    }

    /// Sets instance `index`'s turn rate (radians per second about +Y), added to its root motion
    /// each frame: steering on top of the clips' own motion. Used only with root motion on.
    ///
    /// Errors: an instance that does not exist, a rate that is not finite.
    pub fn set_root_turn(&mut self, index: usize, radians_per_second: f32) -> Result<()> {
        if index >= self.instances.len() || !radians_per_second.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("does not exist, or turn rate {radians_per_second} is not finite"),
            });
        }
        self.edit_both(index, |inst| inst.root_turn = radians_per_second);
        Ok(())
    }

    /// Whether instance `index` moves by root motion.
    #[must_use]
    pub fn root_motion(&self, index: usize) -> bool {
        self.instances.get(index).is_some_and(|i| i.flags & ROOT_MOTION != 0)
    }

    /// Instances with root motion on.
    #[must_use]
    pub fn root_motion_count(&self) -> usize {
        self.root_motion_count
    }

    /// Moves instance `index`: sets its `world_from_model` matrix without touching its clock. With
    /// root motion on ([`Controller::set_root_motion`]), a teleport: the GPU takes this world at
    /// the next frame and root motion carries on from it.
    pub fn set_world(&mut self, index: usize, world: Mat4) -> Result<()> {
        let inst = self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: "does not exist".into(),
        })?;
        if !super::world_within_reach(&world) {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "world matrix must be affine with every element finite and within {:.0e}",
                    crate::reach::MAX_REACH
                ),
            });
        }
        let _ = inst;
        let world = Affine::from_mat4(&world);
        self.world_seq = self.world_seq.wrapping_add(1);
        let seq = self.world_seq;
        self.edit_both(index, |inst| {
            inst.world = world;
            inst.world_seq = seq;
        });
        Ok(())
    }
}
