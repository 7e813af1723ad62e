//! Culling's inputs: the view every frame tests characters against, and each skeleton's bounds.

use super::Controller;
use crate::error::{Error, Result};
use crate::library::SkeletonId;
use glam::{Mat4, Vec4};

impl Controller {
    /// Whether the animator culls ([`crate::gpu::AnimatorDesc::culling`]).
    #[must_use]
    pub fn culling(&self) -> bool {
        self.culling
    }

    pub(crate) fn keep_culling(&mut self, on: bool) {
        self.culling = on;
    }

    /// The view the next frames cull against: `clip_from_world`, a view-projection matrix in
    /// WebGPU's clip space (depth 0 to 1, as [`crate::gpu::Camera::view_proj`]). A character is
    /// evaluated when the sphere of its skeleton's bound radius ([`Controller::set_bounds`])
    /// around its model origin, placed by its world transform, meets the frustum; the others only
    /// advance their clocks. `None`, the default: every character is evaluated. Shadows, a second
    /// camera or anything else that needs characters off this view needs a view that holds them.
    ///
    /// Errors (nothing changes): an animator made without [`crate::gpu::AnimatorDesc::culling`],
    /// or a matrix that is not finite.
    pub fn set_cull_view(&mut self, clip_from_world: Option<Mat4>) -> Result<()> {
        if !self.culling {
            return Err(Error::Limit {
                what: "set_cull_view: the animator was made without AnimatorDesc::culling".into(),
            });
        }
        if let Some(m) = clip_from_world
            && !m.is_finite()
        {
            return Err(Error::Limit {
                what: format!("set_cull_view: the view matrix is not finite: {m:?}"),
            });
        }
        self.cull_view = clip_from_world.map(crate::layout::frustum_planes);
        Ok(())
    }

    /// The frustum planes the next frames cull against ([`Controller::set_cull_view`]).
    #[must_use]
    pub fn cull_planes(&self) -> Option<[Vec4; 6]> {
        self.cull_view
    }

    /// Every instance of skeleton `skeleton` is held, for culling, in the sphere of `radius`
    /// (model units, before the instance's world transform scales it) around its model origin.
    /// By default the skeleton's joints' reach, [`crate::AnimationLibrary::skeleton_radius`]; a
    /// mesh reaches farther by its skin ([`crate::AnimationLibrary::mesh_radius`]), and so do
    /// props on sockets and additive layers: give the radius that holds everything drawn.
    ///
    /// Errors (nothing changes): a skeleton of another library or one that does not exist, or
    /// a radius that is negative, not finite or beyond [`crate::reach::MAX_REACH`].
    pub fn set_bounds(&mut self, skeleton: SkeletonId, radius: f32) -> Result<()> {
        let k = skeleton.check(self.library.tag())? as usize;
        let name = match self.library.skeletons().get(k) {
            Some(s) => s.name().to_owned(),
            None => {
                return Err(Error::Limit {
                    what: format!("set_bounds: skeleton {k} does not exist"),
                });
            }
        };
        if !(radius >= 0.0 && f64::from(radius) <= crate::reach::MAX_REACH) {
            return Err(Error::Limit {
                what: format!(
                    "set_bounds: skeleton '{name}': radius {radius} must be finite, at least 0 and at most {:.0e}",
                    crate::reach::MAX_REACH
                ),
            });
        }
        self.bounds[k] = radius;
        for index in 0..self.instances.len() {
            if self.instances[index].skeleton as usize == k {
                self.edit_both(index, |inst| inst.bound_radius = radius);
            }
        }
        Ok(())
    }

    /// The bound radius of skeleton `k` (its index in the library).
    #[must_use]
    pub(crate) fn bound_radius(&self, k: u32) -> f32 {
        self.bounds.get(k as usize).copied().unwrap_or(0.0)
    }
}
