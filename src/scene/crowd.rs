//! The crowd made, rebuilt on another device, and drawn.

use super::character::Character;
use super::members::add_members;
use super::wiring::{footprints, prop_renderer};
use super::{Crowd, CrowdDesc, SplitMix};
use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::gpu::{
    Animator, AnimatorDesc, Camera, Controller, FootprintRenderer, GroundRenderer, PropRenderer, SkinnedRenderer,
};
use crate::offline::vat::{VatDesc, bake_vat};
use glam::Vec3;

impl Crowd {
    /// A crowd of built-in mannequins on `device`, drawing into `color_format` with optional
    /// depth and MSAA: [`Crowd::with_character_async`] of [`Character::mannequin`], blocking
    /// (native only).
    ///
    /// Errors: as [`Crowd::with_character_async`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
        desc: &CrowdDesc,
    ) -> Result<Self> {
        Self::with_character(
            device,
            color_format,
            depth_format,
            sample_count,
            desc,
            Character::mannequin(),
        )
    }

    blocking! {
        /// [`Crowd::with_character_async`], blocking (native only).
        ///
        /// Errors: as [`Crowd::with_character_async`].
        pub fn with_character(
            device: &wgpu::Device,
            color_format: wgpu::TextureFormat,
            depth_format: Option<wgpu::TextureFormat>,
            sample_count: u32,
            desc: &CrowdDesc,
            character: Character,
        ) -> Result<Self> = Self::with_character_async;
    }

    /// A crowd of `character` on `device`, drawing into `color_format` with optional depth and
    /// MSAA. The spacing is [`CrowdDesc::spacing`] × [`Character::relative_footprint`]. `.await`
    /// it in a browser ([`Animator::new_async`]).
    ///
    /// Errors: a character without clips to play; an animator or renderer the device refuses.
    pub async fn with_character_async(
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
        desc: &CrowdDesc,
        character: Character,
    ) -> Result<Self> {
        let c = &character;
        check_character(c)?;
        let mut animator = Animator::new_async(
            device,
            &c.library,
            &AnimatorDesc {
                max_instances: desc.count.max(1),
                max_joints: None,
                page_instances: None,
                dual_quaternion: desc.skinning != crate::gpu::Skinning::Linear,
                // Room for the mesh's morph weights: the members breathe and some hold an
                // expression.
                morph_weights: c.mesh.morph_targets.targets.len() as u32,
                // A character with legs to plant stands on the relief.
                ground: c.ik.map(|_| super::RELIEF),
                // Members change what they play by inertialization.
                inertialization: true,
                // Members raise an arm and flinch by layers.
                layers: true,
                culling: desc.culling,
                // Update-rate LOD, when turned on, draws far members blended between updates.
                lod_interpolation: desc.culling,
                hierarchy_walk: crate::gpu::HierarchyWalk::Auto,
                character_threads: crate::gpu::CharacterThreads::Auto,
            },
        )
        .await?;
        if desc.culling {
            animator.controller_mut().set_bounds(c.skeleton, bound_radius(c)?)?;
        }
        let mut renderer = skinned_renderer(device, &animator, c, color_format, depth_format, sample_count).await?;
        let vat = if desc.culling && desc.vat {
            let baked = bake_vat(&c.library, c.skeleton, &c.mesh, &VatDesc::default(), |_, _, _| {})?;
            let controller = animator.controller_mut();
            controller.set_vat(c.skeleton, Some(&baked))?;
            controller.set_vat_size(Some(crate::gpu::DEFAULT_VAT_SIZE))?;
            renderer.set_vat_async(device, &animator, Some(&baked)).await?;
            Some(std::sync::Arc::new(baked))
        } else {
            None
        };
        let ground = GroundRenderer::new(
            device,
            color_format,
            depth_format,
            sample_count,
            c.ik.map(|_| super::RELIEF),
        );
        let controller = animator.controller_mut();
        let (agents, half_extent) = add_members(controller, c, desc)?;
        if let Some(ik) = c.ik {
            set_ik_goals(controller, ik)?;
            // Where the target starts (the crowd moves it with itself).
            controller.set_look_at(Vec3::Y * 1.6)?;
        }
        if desc.skinning != crate::gpu::Skinning::Linear {
            for i in 0..controller.instance_count() {
                controller.set_skinning(i, desc.skinning)?;
            }
        }
        if c.root_motion && desc.moving {
            // Where root motion took each member, read back to keep them on the field and to aim.
            let all: Vec<usize> = (0..agents.len()).collect();
            animator.watch_outputs(device, &all)?;
        }
        let props = prop_renderer(
            device,
            &animator,
            &character,
            agents.len(),
            color_format,
            depth_format,
            sample_count,
        )
        .await?;
        let footprints = if desc.footprints {
            footprints(
                device,
                &mut animator,
                &character,
                agents.len(),
                color_format,
                depth_format,
                sample_count,
            )
            .await?
        } else {
            None
        };
        Self {
            animator,
            character,
            renderer,
            ground,
            props,
            footprints,
            seconds: 0.0,
            event_window: std::collections::VecDeque::new(),
            held: Vec::new(),
            agents,
            half_extent,
            moving: desc.moving,
            roams: desc.moving,
            animation_paused: false,
            rng: SplitMix(desc.seed ^ 0x5eed_5eed),
            clock: 0.0,
            target: Vec3::Y * 1.6,
            cull_view: std::cell::Cell::new(None),
            vat,
            lod_tint: false,
            machine_counts: None,
        }
        .watching_machines(device)
    }

    /// The same crowd on another device (after its device was lost, say), drawing into
    /// `color_format` with optional depth and MSAA: the animator rebuilt from what it kept
    /// ([`Animator::rebuild`]; the crowd's animator needs [`Animator::set_recovery`]), the
    /// renderers made again, every member where it was, doing what it did.
    ///
    /// Errors: as [`Animator::rebuild`]; renderers the device refuses.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn rebuild(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Self> {
        let mut animator = self.animator.rebuild(device, queue)?;
        let mut renderer = pollster::block_on(skinned_renderer(
            device,
            &animator,
            &self.character,
            color_format,
            depth_format,
            sample_count,
        ))?;
        renderer.set_vat(device, &animator, self.vat.as_deref())?;
        renderer.set_lod_tint(queue, self.lod_tint);
        let props = self.prop_renderer_on(device, &animator, color_format, depth_format, sample_count)?;
        // The marks were on the lost device: the new ring starts empty.
        let footprints = if self.footprints.is_some() {
            pollster::block_on(footprints(
                device,
                &mut animator,
                &self.character,
                self.agents.len(),
                color_format,
                depth_format,
                sample_count,
            ))?
        } else {
            None
        };
        Ok(Self {
            animator,
            character: self.character.clone(),
            renderer,
            ground: GroundRenderer::new(
                device,
                color_format,
                depth_format,
                sample_count,
                self.character.ik.map(|_| super::RELIEF),
            ),
            props,
            footprints,
            seconds: self.seconds,
            event_window: self.event_window.clone(),
            held: self.held.clone(),
            agents: self.agents.clone(),
            half_extent: self.half_extent,
            moving: self.moving,
            roams: self.roams,
            animation_paused: self.animation_paused,
            rng: self.rng.clone(),
            clock: self.clock,
            target: self.target,
            cull_view: self.cull_view.clone(),
            vat: self.vat.clone(),
            lod_tint: self.lod_tint,
            machine_counts: self.machine_counts.clone(),
        })
    }

    /// Tints every member by how the animator animates it (on) or by its own tint (off, the
    /// default): [`SkinnedRenderer::set_lod_tint`]'s colours, blue evaluated every frame, green
    /// every 2nd, yellow every 4th, red every 8th, violet drawn by its VAT.
    pub fn set_lod_tint(&mut self, queue: &wgpu::Queue, on: bool) {
        self.renderer.set_lod_tint(queue, on);
        self.lod_tint = on;
    }

    /// Whether members are tinted by how they are animated ([`Crowd::set_lod_tint`]).
    #[must_use]
    pub fn lod_tint(&self) -> bool {
        self.lod_tint
    }

    /// With culling, how many members the last frame drew skinned, evaluated (in view and due,
    /// or keeping a pose for a transition) and drew with their VAT, read back from the GPU
    /// (waiting for it; native only); `None` without culling.
    ///
    /// Errors: a read-back that fails.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn cull_counts(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Option<super::CullCounts>> {
        if !self.animator.controller().culling() {
            return Ok(None);
        }
        let mut n = super::CullCounts::default();
        for page in 0..self.animator.controller().pages_in_use() {
            let head = self.animator.read_visible_head(device, queue, page)?;
            n.drawn += head.drawn_count as usize;
            n.evaluated += head.count as usize;
            n.vat += head.vat_count as usize;
        }
        Ok(Some(n))
    }

    /// The character's vertex animation texture, when the crowd draws far members with one
    /// ([`CrowdDesc::vat`]).
    #[must_use]
    pub fn vat(&self) -> Option<&crate::vat::Vat> {
        self.vat.as_deref()
    }

    /// Half the side of the square field the crowd occupies, metres.
    #[must_use]
    pub fn half_extent(&self) -> f32 {
        self.half_extent
    }

    /// Number of characters.
    #[must_use]
    pub fn count(&self) -> usize {
        self.agents.len()
    }

    /// Removes characters from `count` on.
    pub fn truncate(&mut self, count: usize) {
        self.agents.truncate(count);
        self.animator.controller_mut().truncate(count);
    }

    /// Whether members move across the field (`true`) or animate in place, frozen where they
    /// stand. Members of a crowd built with [`CrowdDesc::moving`] `false` have no course, so they
    /// stay in place either way.
    pub fn set_moving(&mut self, moving: bool) {
        // Only members that roam (a crowd built moving) move by root motion.
        if self.character.root_motion && self.roams && moving != self.moving {
            for (i, a) in self.agents.iter().enumerate() {
                if !moving {
                    // Frozen where it was last read back (root motion off, the world is the CPU's).
                    let _ = self
                        .animator
                        .controller_mut()
                        .set_world(i, self.character.world(a.position, a.heading));
                }
                let _ = self.animator.controller_mut().set_root_motion(i, moving);
            }
        }
        self.moving = moving;
    }

    /// Whether members move across the field (see [`Crowd::set_moving`]).
    #[must_use]
    pub fn is_moving(&self) -> bool {
        self.moving
    }

    /// Pauses or resumes the animation clocks only: while paused, [`Crowd::update`] still moves
    /// the members but hands the animator a `dt` of 0.
    pub fn set_animation_paused(&mut self, paused: bool) {
        self.animation_paused = paused;
    }

    /// Whether the animation clocks are paused (see [`Crowd::set_animation_paused`]).
    #[must_use]
    pub fn is_animation_paused(&self) -> bool {
        self.animation_paused
    }

    blocking! {
        /// [`Crowd::footprint_renderer_async`], blocking (native only).
        ///
        /// Errors: as [`Crowd::footprint_renderer_async`].
        pub fn footprint_renderer(
            &self,
            device: &wgpu::Device,
            color_format: wgpu::TextureFormat,
            depth_format: Option<wgpu::TextureFormat>,
            sample_count: u32,
        ) -> Result<Option<FootprintRenderer>> = Self::footprint_renderer_async;
    }

    /// A renderer of the crowd's footprints for another target (a screenshot's, say); `None`
    /// when the character has none. `.await` it in a browser ([`Footprints::renderer_async`](crate::gpu::Footprints::renderer_async)).
    ///
    /// Errors: a pipeline the device refuses.
    pub async fn footprint_renderer_async(
        &self,
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Option<FootprintRenderer>> {
        match &self.footprints {
            Some((marks, _)) => marks
                .renderer_async(device, color_format, depth_format, sample_count)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// The footprints' clock now (for [`FootprintRenderer::set_view`]).
    #[must_use]
    pub fn footprint_time(&self) -> f32 {
        self.seconds
    }

    /// Uploads the camera to the renderers; with culling ([`super::CrowdDesc::culling`]), the
    /// next [`Crowd::update`] culls against it (so set the camera before the update).
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &Camera) {
        self.cull_view.set(Some(camera.view_proj));
        self.renderer.set_camera(queue, camera);
        self.ground.set_camera(queue, camera);
        if let Some(p) = &self.props {
            p.set_camera(queue, camera);
        }
        if let Some((_, r)) = &self.footprints {
            r.set_view(queue, camera, self.seconds);
        }
    }

    /// [`Crowd::prop_renderer_async`], blocking (native only).
    ///
    /// Errors: as [`Crowd::prop_renderer_async`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prop_renderer(
        &self,
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Option<PropRenderer>> {
        self.prop_renderer_on(device, &self.animator, color_format, depth_format, sample_count)
    }

    /// A renderer of the character's prop in the hands of its holders (every
    /// [`HeldProp::every`](super::HeldProp::every)-th member) for another target (a screenshot's,
    /// say); `None` when the character has no prop. `.await` it in a browser
    /// ([`PropRenderer::new_async`]).
    ///
    /// Errors: as [`PropRenderer::new_async`].
    pub async fn prop_renderer_async(
        &self,
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Option<PropRenderer>> {
        prop_renderer(
            device,
            &self.animator,
            &self.character,
            self.agents.len(),
            color_format,
            depth_format,
            sample_count,
        )
        .await
    }

    /// The prop renderer of this crowd's holders for `animator` (this crowd's, or its rebuild's),
    /// blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    fn prop_renderer_on(
        &self,
        device: &wgpu::Device,
        animator: &Animator,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Option<PropRenderer>> {
        pollster::block_on(prop_renderer(
            device,
            animator,
            &self.character,
            self.agents.len(),
            color_format,
            depth_format,
            sample_count,
        ))
    }

    /// Records the animation passes, then what follows them ([`Crowd::encode_after_passes`]).
    ///
    /// Errors: before the first [`Crowd::update`] ([`Error::NotPrepared`]: it prepares the
    /// animator's frames).
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        self.animator.encode(encoder)?;
        self.encode_after_passes(encoder);
        Ok(())
    }

    /// Records what follows the animator's passes (when those are recorded by hand, with
    /// timestamps say): with culling, the culled draws' instance counts; the footprints'
    /// stamping pass.
    pub fn encode_after_passes(&self, encoder: &mut wgpu::CommandEncoder) {
        self.renderer.encode(encoder, &self.animator);
        if let Some((marks, _)) = &self.footprints {
            marks.encode(encoder, &self.animator);
        }
    }

    /// Draws the ground, the footprints on it, every character and the props they hold.
    ///
    /// Errors (nothing recorded): before the first [`Crowd::update`] ([`Error::NotPrepared`]).
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) -> Result<()> {
        self.animator.check_prepared(|| "Crowd::draw".to_owned())?;
        self.ground.draw(pass);
        if let Some((_, r)) = &self.footprints {
            r.draw(pass);
        }
        self.renderer.draw_visible(pass, &self.animator)?;
        if let Some(p) = &self.props {
            p.draw(pass, &self.animator);
        }
        Ok(())
    }

    /// A camera that frames the whole crowd from above and to the side (distances scale with
    /// the character's size).
    #[must_use]
    pub fn overview_camera(&self, aspect: f32) -> Camera {
        let (f, h) = (self.character.relative_footprint, self.character.relative_height);
        let e = self.half_extent.max(2.0 * f);
        let target = Vec3::new(0.0, 0.6 * h, 0.0);
        let eye = Vec3::new(e * 0.9, e * 0.75 + 1.5 * h, e * 1.6 + 3.0 * f);
        Camera::look_at(eye, target, 40f32.to_radians(), aspect, 0.1, 2000.0)
    }
}

/// Errors unless `c` has at least one clip, and one share and one velocity per clip.
fn check_character(c: &Character) -> Result<()> {
    if c.clips.is_empty() || c.clip_shares.len() != c.clips.len() || c.velocities.len() != c.clips.len() {
        return Err(Error::Limit {
            what: format!(
                "character '{}' needs at least one clip, and one share and one velocity per clip",
                c.name
            ),
        });
    }
    Ok(())
}

/// The renderer of `c`'s mesh for every instance of `animator`.
async fn skinned_renderer(
    device: &wgpu::Device,
    animator: &Animator,
    c: &Character,
    color_format: wgpu::TextureFormat,
    depth_format: Option<wgpu::TextureFormat>,
    sample_count: u32,
) -> Result<SkinnedRenderer> {
    SkinnedRenderer::new_async(
        device,
        animator,
        c.skeleton,
        &c.mesh,
        color_format,
        depth_format,
        sample_count,
    )
    .await
}

/// Every member's feet planted on the relief (the pelvis lowered to the lower foot), and every
/// other member's head turned toward the circling target, over half of the way.
fn set_ik_goals(controller: &mut Controller, ik: super::CharacterIk) -> Result<()> {
    use crate::ik::{IkGoal, IkTarget};
    let planted = IkGoal {
        target: IkTarget::Ground,
        weight: 1.0,
    };
    let looking = IkGoal {
        target: IkTarget::LookAt,
        weight: 0.6,
    };
    for i in 0..controller.instance_count() {
        for leg in ik.legs {
            controller.set_ik_goal(i, leg, Some(planted))?;
        }
        if i % 2 == 0 {
            controller.set_ik_goal(i, ik.look, Some(looking))?;
        }
    }
    Ok(())
}

/// The radius culling tests for `c` (model units): everything drawn of a member in any pose —
/// its mesh's reach ([`crate::AnimationLibrary::mesh_radius`]), or the prop in its hand, as far as
/// the joints reach plus the socket's offset plus the prop's own size, whichever is larger —
/// raised by the most the relief lifts a character whose feet IK plants
/// ([`super::RELIEF_MAX`]).
fn bound_radius(c: &Character) -> Result<f32> {
    let mesh = c.library.mesh_radius(c.skeleton, &c.mesh)?;
    let joints = c.library.skeleton_radius(c.skeleton)?;
    let sockets = c.library.skeletons()[c.skeleton.index() as usize].sockets();
    let prop = c.prop.as_ref().map_or(0.0, |p| {
        let offset = sockets.get(p.socket).map_or(0.0, |s| s.offset.translation.length());
        let size = p.mesh.positions.iter().map(|v| v.length()).fold(0.0, f32::max);
        joints + offset + size
    });
    let lift = if c.ik.is_some() { super::RELIEF_MAX } else { 0.0 };
    Ok(mesh.max(prop) + lift)
}
