//! Culling's inputs: the view every frame tests characters against, and each skeleton's bounds.

use super::Controller;
use crate::error::{Error, Result};
use crate::library::SkeletonId;
use glam::{Mat4, Vec4};

/// Thresholds of projected size for [`Controller::set_update_rates`] that suit a crowd seen by a
/// game camera: a character 2.3 m in bound radius seen by a 60° camera is evaluated every 2 frames
/// from about 50 m, every 4 from about 100 m and every 8 from about 200 m.
pub const DEFAULT_UPDATE_RATES: [f32; 3] = [0.08, 0.04, 0.02];

impl Controller {
    /// Whether the animator culls ([`crate::gpu::AnimatorDesc::culling`]).
    #[must_use]
    pub fn culling(&self) -> bool {
        self.culling
    }

    pub(crate) fn keep_culling(&mut self, on: bool, interpolate: bool) {
        self.culling = on;
        self.lod_interpolation = on && interpolate;
    }

    /// Whether update-rate LOD interpolates between evaluations
    /// ([`crate::gpu::AnimatorDesc::lod_interpolation`]).
    #[must_use]
    pub fn lod_interpolation(&self) -> bool {
        self.lod_interpolation
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
        self.cull_view = clip_from_world;
        Ok(())
    }

    /// The frustum planes the next frames cull against ([`Controller::set_cull_view`]).
    #[must_use]
    pub fn cull_planes(&self) -> Option<[Vec4; 6]> {
        self.cull_view.map(crate::layout::frustum_planes)
    }

    /// Update-rate LOD: with a view ([`Controller::set_cull_view`]), a character whose projected
    /// size — its bound radius ([`Controller::set_bounds`]) in units of half the view's height —
    /// is below `thresholds[0]`, `[1]` or `[2]` is evaluated only every 2, 4 or 8 frames
    /// (staggered: each on its own frame, so that every frame carries an even share), and drawn
    /// in between with the palette of its last evaluation. A character seen for the first time
    /// since it was out of view, and any frame that keeps a pose for a transition, is evaluated at
    /// once. Clocks, events, root motion and float curves stay exact every frame; socket matrices
    /// and IK's reached chains are those of the last evaluation. `None`, the default: every
    /// character seen is evaluated every frame. A character's own rate
    /// ([`Controller::set_update_rate`]) overrides these.
    ///
    /// For a 1.8 m character 2.3 m in radius, seen by a 60° camera, a size of 0.1 is at about 40 m.
    ///
    /// Errors (nothing changes): an animator made without
    /// [`crate::gpu::AnimatorDesc::culling`], or thresholds that are not finite, negative or not
    /// in decreasing order.
    pub fn set_update_rates(&mut self, thresholds: Option<[f32; 3]>) -> Result<()> {
        if !self.culling {
            return Err(Error::Limit {
                what: "set_update_rates: the animator was made without AnimatorDesc::culling".into(),
            });
        }
        if let Some(t) = thresholds
            && !(t.iter().all(|v| v.is_finite() && *v >= 0.0) && t[0] >= t[1] && t[1] >= t[2])
        {
            return Err(Error::Limit {
                what: format!(
                    "set_update_rates: thresholds {t:?} must be finite, at least 0 and in decreasing order (2, 4, 8 frames)"
                ),
            });
        }
        self.update_rates = thresholds;
        Ok(())
    }

    /// The thresholds of update-rate LOD ([`Controller::set_update_rates`]).
    #[must_use]
    pub fn update_rates(&self) -> Option<[f32; 3]> {
        self.update_rates
    }

    /// Instance `index` is evaluated every `rate` frames (1, 2, 4 or 8) while seen, whatever its
    /// projected size, or (`None`) at the rate its size gives ([`Controller::set_update_rates`]).
    ///
    /// Errors (nothing changes): an animator made without [`crate::gpu::AnimatorDesc::culling`],
    /// an instance that does not exist, a rate other than 1, 2, 4 or 8.
    pub fn set_update_rate(&mut self, index: usize, rate: Option<u32>) -> Result<()> {
        let err = |what: String| Error::Instance { instance: index, what };
        if !self.culling {
            return Err(err(
                "set_update_rate: the animator was made without AnimatorDesc::culling".into(),
            ));
        }
        if index >= self.instances.len() {
            return Err(err(format!("does not exist ({} instances)", self.instances.len())));
        }
        let rate = match rate {
            None => 0,
            Some(r) if crate::layout::UPDATE_RATES.contains(&r) => r,
            Some(r) => return Err(err(format!("update rate {r}: it must be 1, 2, 4 or 8 frames"))),
        };
        self.edit_both(index, |inst| inst.update_rate = rate);
        Ok(())
    }

    /// [`crate::layout::GpuFrame::lod`] of the next frames: the thresholds and the view's
    /// projection scale (thresholds 0 without LOD or without a view).
    pub(super) fn lod_uniform(&self) -> Vec4 {
        // The projection scale with any view: VAT sizes read it without update rates too.
        match (self.update_rates, self.cull_view) {
            (Some([a, b, c]), Some(m)) => Vec4::new(a, b, c, m.row(1).truncate().length()),
            (None, Some(m)) => Vec4::new(0.0, 0.0, 0.0, m.row(1).truncate().length()),
            _ => Vec4::ZERO,
        }
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
