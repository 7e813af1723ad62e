//! Inverse kinematics on the GPU: mannequins walking over bumpy ground, the same frame of the same
//! clip for all six. The three on the left play it as authored, on the ground's height under
//! their root: their feet sink into the bumps and hang over the hollows. The three on the right
//! have ground goals on both legs (each foot planted, the pelvis lowered to the lower one) and
//! look at the viewer through their aim chain (head, neck, upper spine). Uses `Animator`,
//! `SkinnedRenderer` and `GroundRenderer` directly.
//!
//! ```text
//! cargo run --release --example ik -- [--time T] [--out PATH]
//! ```

use clap::Parser;
use glam::{Mat4, Quat, Vec2, Vec3};
use std::path::PathBuf;
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget, headless_device};
use wgpu_anim::ik::{IkGoal, IkTarget};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, SkinnedRenderer, mannequin};

/// Renders mannequins on bumps without and with IK.
#[derive(Parser)]
#[command(name = "ik")]
struct Args {
    /// The walk's time shown, seconds.
    #[arg(long, value_name = "T", default_value_t = 0.25)]
    time: f32,
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "ik.png")]
    out: PathBuf,
}

/// Bumps along the row, on a ledge that drops away behind it (so that the ground's edge stands
/// against the sky), in WGSL for the animator and the ground renderer, and in Rust.
const BUMPS: &str = "fn ground_height(p: vec2<f32>) -> f32 {\n    return 0.14 * sin(2.2 * p.x) - 4.0 * smoothstep(0.25, 0.9, -p.y);\n}\n";

fn bumps(p: Vec2) -> f32 {
    let t = ((-p.y - 0.25) / 0.65).clamp(0.0, 1.0);
    0.14 * (2.2 * p.x).sin() - 4.0 * t * t * (3.0 - 2.0 * t)
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    if !args.time.is_finite() {
        return Err(format!("--time {} is not a time", args.time).into());
    }
    let (device, queue) = headless_device()?;
    let mut skeleton = mannequin::skeleton();
    let [leg_l, leg_r, look] = mannequin::add_ik(&mut skeleton)?;
    let mesh = mannequin::mesh(&skeleton);
    let (library, skeleton, clips) = mannequin::library_of(skeleton);
    let desc = AnimatorDesc::default().with_max_instances(6).with_ground(Some(BUMPS));
    let mut animator = Animator::new(&device, &library, &desc)?;
    // The characters' state, on the CPU: the next `prepare` uploads it.
    let controller = animator.controller_mut();
    // Where the viewer is, for the heads that look.
    let eye = Vec3::new(0.0, 0.55, 11.0);
    controller.set_look_at(eye)?;
    for k in 0..6 {
        let x = -4.1 + k as f32 * 1.35 + if k >= 3 { 0.8 } else { 0.0 };
        let root = Vec2::new(x, 0.0);
        let world = Mat4::from_rotation_translation(
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            Vec3::new(root.x, bumps(root), root.y),
        );
        let time = args.time + 0.11 * k as f32;
        let i = controller.add_instance(
            &InstanceDesc::new(clips[1])
                .with_rate(0.0)
                .with_time(time)
                .with_world(world)
                .with_tint([200, 190, 176, 255]),
        )?;
        if k >= 3 {
            let planted = IkGoal { target: IkTarget::Ground, weight: 1.0 };
            controller.set_ik_goal(i, leg_l, Some(planted))?;
            controller.set_ik_goal(i, leg_r, Some(planted))?;
            controller.set_ik_goal(i, look, Some(IkGoal { target: IkTarget::LookAt, weight: 1.0 }))?;
        }
    }

    let (width, height) = (1400, 560);
    let target = OffscreenTarget::new(&device, width, height)?;
    let (color, depth) = (OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT));
    let renderer = SkinnedRenderer::new(&device, &animator, skeleton, &mesh, color, depth, 1)?;
    let ground = GroundRenderer::new(&device, color, depth, 1, Some(BUMPS));
    // From the side at knee height: the feet against the ledge's bumpy edge.
    let centre = Vec3::new(0.0, 0.75, 0.0);
    let camera = Camera::look_at(eye, centre, 0.42, width as f32 / height as f32, 0.1, 100.0)
        .with_light(Vec3::new(-0.5, -0.8, -0.6));
    renderer.set_camera(&queue, &camera);
    ground.set_camera(&queue, &camera);
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder)?;
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        ground.draw(&mut pass);
        renderer.draw(&mut pass, &animator, 0..6)?;
    }
    queue.submit([encoder.finish()]);
    wgpu_anim::image::save_png(&args.out, width, height, &target.read_rgba(&device, &queue)?)?;
    println!(
        "left: the walk as authored, standing on the bumps' height at the root; right: feet planted and heads \
         looking with IK; saved {}",
        args.out.display()
    );
    Ok(())
}
