//! A ready-made scene: a crowd of built-in mannequins on a ground plane, each playing its own clip
//! at its own phase and rate, walkers and runners moving across the field at the speed their gait
//! was authored for. The headless example, the crowd demo, the render test and the benchmarks
//! share it; it is also a compact example of driving [`Animator`] and [`SkinnedRenderer`].

use crate::error::Result;
use crate::gpu::{Animator, AnimatorDesc, Camera, GroundRenderer, InstanceDesc, SkinnedRenderer};
use crate::library::ClipId;
use crate::mannequin::{self, Mannequin};
use glam::{Mat4, Quat, Vec2, Vec3};

/// How many characters and how they are laid out.
#[derive(Clone, Copy, Debug)]
pub struct CrowdDesc {
    /// Number of characters.
    pub count: u32,
    /// Seed of the random layout, clips, phases and tints.
    pub seed: u64,
    /// Distance between neighbours on the starting grid, metres.
    pub spacing: f32,
    /// Whether walkers and runners move (otherwise they animate in place).
    pub moving: bool,
}

impl Default for CrowdDesc {
    fn default() -> Self {
        Self {
            count: 1000,
            seed: 1,
            spacing: 1.6,
            moving: true,
        }
    }
}

struct Agent {
    position: Vec2,
    heading: f32,
    /// World-space velocity, m/s.
    velocity: Vec2,
}

/// A crowd of mannequins with its animator and renderers.
pub struct Crowd {
    /// The animator holding every character's state (one instance per character).
    pub animator: Animator,
    /// The built-in character.
    pub mannequin: Mannequin,
    /// The mannequin's clips, in [`mannequin::CLIP_NAMES`] order.
    pub clips: Vec<ClipId>,
    renderer: SkinnedRenderer,
    ground: GroundRenderer,
    agents: Vec<Agent>,
    half_extent: f32,
    moving: bool,
}

/// A small deterministic generator (SplitMix64), so the scene needs no RNG dependency.
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
}

fn tint(r: &mut SplitMix) -> [u8; 4] {
    // Muted clothing colours: pick a hue, keep saturation and value moderate.
    let h = r.unit() * 6.0;
    let (s, v) = (r.range(0.25, 0.6), r.range(0.55, 0.9));
    let c = v * s;
    let x = c * (1.0 - ((h % 2.0) - 1.0).abs());
    let (r1, g1, b1) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let to = |f: f32| ((f + m) * 255.0).round() as u8;
    [to(r1), to(g1), to(b1), 255]
}

impl Crowd {
    /// Builds the crowd on `device`, drawing into `color_format` with optional depth and MSAA.
    pub fn new(
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
        desc: &CrowdDesc,
    ) -> Result<Self> {
        let mannequin = mannequin::mannequin();
        let (library, skeleton, clips) = mannequin::library();
        let joints = library.skeletons[skeleton.0 as usize].joint_count();
        let mut animator = Animator::new(
            device,
            &library,
            &AnimatorDesc {
                max_instances: desc.count.max(1),
                max_joints: None,
            },
        )?;
        let renderer = SkinnedRenderer::new(
            device,
            &animator,
            &mannequin.mesh,
            joints,
            color_format,
            depth_format,
            sample_count,
        )?;
        let ground = GroundRenderer::new(device, color_format, depth_format, sample_count);
        let gaits = mannequin::gaits();
        let side = (desc.count as f32).sqrt().ceil().max(1.0);
        let half_extent = side * desc.spacing * 0.5;
        let mut r = SplitMix(desc.seed);
        let mut agents = Vec::with_capacity(desc.count as usize);
        for i in 0..desc.count {
            let (gx, gz) = ((i as f32 % side), (i as f32 / side).floor());
            let jitter = Vec2::new(r.range(-0.25, 0.25), r.range(-0.25, 0.25)) * desc.spacing;
            let position = Vec2::new(gx + 0.5 - side * 0.5, gz + 0.5 - side * 0.5) * desc.spacing + jitter;
            // idle 25 %, walk 35 %, run 20 %, backward 6 %, strafes 7 % each.
            let pick = r.unit();
            let k = [0.25, 0.60, 0.80, 0.86, 0.93, 1.0]
                .iter()
                .position(|&c| pick < c)
                .unwrap_or(0);
            let clip = clips[k];
            let rate = r.range(0.85, 1.15);
            let heading = r.range(-std::f32::consts::PI, std::f32::consts::PI);
            let local_velocity = gaits
                .iter()
                .find(|g| g.clip == mannequin::CLIP_NAMES[k])
                .map_or(Vec2::ZERO, |g| g.velocity)
                * rate;
            let velocity = {
                let v = Quat::from_rotation_y(heading) * Vec3::new(local_velocity.x, 0.0, local_velocity.y);
                Vec2::new(v.x, v.z)
            };
            let duration = library.clip_duration(clip).unwrap_or(1.0);
            let agent = Agent {
                position,
                heading,
                velocity: if desc.moving { velocity } else { Vec2::ZERO },
            };
            animator.add_instance(&InstanceDesc {
                time: r.unit() * duration,
                rate,
                world: agent.world(),
                tint: tint(&mut r),
                ..InstanceDesc::new(clip)
            })?;
            agents.push(agent);
        }
        Ok(Self {
            animator,
            mannequin,
            clips,
            renderer,
            ground,
            agents,
            half_extent,
            moving: desc.moving,
        })
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
        self.animator.truncate(count);
    }

    /// Advances the crowd by `dt` seconds: moves walkers and runners (wrapping at the field's
    /// edge), uploads their world matrices and the frame's `dt`.
    pub fn update(&mut self, queue: &wgpu::Queue, dt: f32) {
        if self.moving && dt != 0.0 {
            let e = self.half_extent;
            for (i, a) in self.agents.iter_mut().enumerate() {
                if a.velocity == Vec2::ZERO {
                    continue;
                }
                a.position += a.velocity * dt;
                a.position = (a.position + Vec2::splat(e)).rem_euclid(Vec2::splat(2.0 * e)) - Vec2::splat(e);
                // A world matrix built here is always finite and affine.
                let _ = self.animator.set_world(i, a.world());
            }
        }
        self.animator.prepare(queue, dt);
    }

    /// Uploads the camera to both renderers.
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &Camera) {
        self.renderer.set_camera(queue, camera);
        self.ground.set_camera(queue, camera);
    }

    /// Records the animation passes.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        self.animator.encode(encoder);
    }

    /// Draws the ground and every character.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.ground.draw(pass);
        self.renderer.draw(pass, 0..self.agents.len() as u32);
    }

    /// A camera that frames the whole crowd from above and to the side.
    #[must_use]
    pub fn overview_camera(&self, aspect: f32) -> Camera {
        let e = self.half_extent.max(2.0);
        let target = Vec3::new(0.0, 0.6, 0.0);
        let eye = Vec3::new(e * 0.9, e * 0.75 + 1.5, e * 1.6 + 3.0);
        Camera::look_at(eye, target, 40f32.to_radians(), aspect, 0.1, 2000.0)
    }
}

impl Agent {
    fn world(&self) -> Mat4 {
        Mat4::from_rotation_translation(
            Quat::from_rotation_y(self.heading),
            Vec3::new(self.position.x, 0.0, self.position.y),
        )
    }
}
