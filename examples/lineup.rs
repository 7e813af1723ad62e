//! Renders the built-in clips side by side: one row per clip, one column per phase, seen from the
//! side. Uses `Animator` and `SkinnedRenderer` directly, without the crowd scene.
//!
//! ```text
//! cargo run --release --example lineup -- [--phases N] [--out PATH]
//! ```

use clap::Parser;
use glam::{Mat4, Quat, Vec3};
use std::path::PathBuf;
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget, headless_device};

use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, LoopMode, SkinnedRenderer, mannequin};

/// Renders the built-in clips side by side: one row per clip, one column per phase.
#[derive(Parser)]
#[command(name = "lineup")]
struct Args {
    /// Phases (columns) per clip, from 1 to 16.
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=16))]
    phases: u32,
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "lineup.png")]
    out: PathBuf,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(args.phases, &args.out) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(phases: u32, out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let (device, queue) = headless_device()?;
    let m = mannequin::mannequin();
    let (library, skeleton, clips) = mannequin::library();
    let rows = clips.len() as u32;
    let mut animator = Animator::new(&device, &library, &AnimatorDesc::default().with_max_instances(rows * phases))?;
    for (row, &clip) in clips.iter().enumerate() {
        let duration = library.clip_duration(clip).unwrap_or(1.0);
        for col in 0..phases {
            // Characters face +x (moving to the right in the picture); rows are stacked upwards
            // in the air so an orthographic side view shows each one clearly.
            let world = Mat4::from_rotation_translation(
                Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
                Vec3::new(col as f32 * 1.4, (rows - 1 - row as u32) as f32 * 2.2, 0.0),
            );
            animator.controller_mut().add_instance(
                &InstanceDesc::new(clip)
                    .with_time(duration * col as f32 / phases as f32)
                    .with_rate(0.0)
                    .with_loop_mode(LoopMode::Forever)
                    .with_world(world)
                    .with_tint(
                        [
                            [214, 160, 140, 255],
                            [140, 180, 214, 255],
                            [160, 200, 140, 255],
                            [200, 170, 220, 255],
                            [220, 200, 140, 255],
                            [150, 210, 200, 255],
                        ][row % 6],
                    ),
            )?;
        }
    }
    let (width, height) = (220 * phases, 210 * rows);
    let target = OffscreenTarget::new(&device, width, height)?;
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        skeleton,
        &m.mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )?;
    // Orthographic, from the characters' left side (+z), 2.2 m of world per row.
    let (w, h) = (phases as f32 * 1.4, rows as f32 * 2.2);
    let eye = Vec3::new(w * 0.5 - 0.7, h * 0.5 - 0.2, 10.0);
    let view = glam::camera::rh::view::look_to_mat4(eye, Vec3::NEG_Z, Vec3::Y);
    let proj = glam::camera::rh::proj::directx::orthographic(-w * 0.5, w * 0.5, -h * 0.5, h * 0.5, 0.1, 20.0);
    let camera = Camera {
        view_proj: proj * view,
        eye: eye.extend(1.0),
        light_dir: Vec3::new(-0.3, -0.5, -1.0).normalize().extend(0.0),
    };
    renderer.set_camera(&queue, &camera);
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder)?;
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        renderer.draw(&mut pass, &animator, 0..rows * phases)?;
    }
    queue.submit([encoder.finish()]);
    wgpu_anim::image::save_png(out, width, height, &target.read_rgba(&device, &queue)?)?;
    println!(
        "rows: {} — columns: phases 0/{phases} … {}/{phases}; saved {}",
        mannequin::CLIP_NAMES.join(", "),
        phases - 1,
        out.display()
    );
    Ok(())
}
