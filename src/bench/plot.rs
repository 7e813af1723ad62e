//! A log–log line chart of frame time against character count, one line per workload × path,
//! drawn with [plotters](https://docs.rs/plotters) into a bitmap and saved as a PNG.
//!
//! The text is set in Noto Sans Regular, whose bytes come from the `ttf-noto-sans` crate
//! (Apache-2.0), so drawing needs no font installed on the machine. `Canvas` lays the text out
//! and rasterizes it with `ab_glyph`; everything else is plotters' bitmap backend.

use super::{PathKind, Row};
use crate::error::{Error, Result};
use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, DrawingErrorKind};
use std::path::Path;
use std::sync::OnceLock;

/// The family name the embedded font is registered under.
const FONT: &str = "wgpu-anim-noto-sans";
/// Width of the legend column to the right of the chart, pixels.
const LEGEND_WIDTH: u32 = 270;

const INK: RGBColor = RGBColor(30, 30, 30);
const GRID: RGBColor = RGBColor(225, 225, 225);
const SUBTLE: RGBColor = RGBColor(110, 110, 110);

/// A line: workload index, path, (characters, ms) points sorted by characters.
type Series = (usize, PathKind, Vec<(f64, f64)>);

/// Plotters' bitmap backend with its own text drawing: each glyph at its pen position, with
/// kerning and side bearings, anti-aliased. (Plotters 0.3.7 draws `ab_glyph` text without the
/// glyphs' side bearings, which spaces letters unevenly.) Every piece of text is set in the
/// embedded font, whatever family the style names.
struct Canvas<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

/// Glyphs of one line of text laid out from (0, 0) at the top left of its box, and the box's
/// width and height in pixels.
struct Line {
    glyphs: Vec<ab_glyph::Glyph>,
    width: f32,
    height: f32,
}

impl Canvas<'_> {
    fn layout(&self, text: &str, size: f64) -> Line {
        let font = self.font.as_scaled(PxScale::from(size as f32));
        let mut glyphs = Vec::with_capacity(text.len());
        let (mut x, mut previous) = (0.0, None);
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                x += font.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(font.scale(), ab_glyph::point(x, font.ascent())));
            x += font.h_advance(id);
            previous = Some(id);
        }
        Line {
            glyphs,
            width: x,
            height: font.ascent() - font.descent(),
        }
    }
}

impl<'a> DrawingBackend for Canvas<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn draw_text<S: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let line = self.layout(text, style.size());
        let (w, h) = (line.width.round() as i32, line.height.round() as i32);
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0,
            HPos::Center => -w / 2,
            HPos::Right => -w,
        };
        let dy = match anchor.v_pos {
            VPos::Top => 0,
            VPos::Center => -h / 2,
            VPos::Bottom => -h,
        };
        let transform = style.transform();
        let mut coverage = Vec::new();
        for glyph in line.glyphs {
            if let Some(outline) = self.font.outline_glyph(glyph) {
                let bounds = outline.px_bounds();
                let (x0, y0) = (bounds.min.x as i32 + dx, bounds.min.y as i32 + dy);
                outline.draw(|x, y, c| {
                    if c > 0.0 {
                        let (tx, ty) = transform.transform(x0 + x as i32, y0 + y as i32);
                        coverage.push(((pos.0 + tx, pos.1 + ty), c));
                    }
                });
            }
        }
        for (point, c) in coverage {
            let alpha = color.alpha * f64::from(c.min(1.0));
            self.inner.draw_pixel(point, BackendColor { alpha, rgb: color.rgb })?;
        }
        Ok(())
    }

    fn estimate_text_size<S: plotters_backend::BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> std::result::Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let line = self.layout(text, style.size());
        Ok((line.width.round() as u32, line.height.round() as u32))
    }
}

/// Registers the embedded font with plotters, once per process.
fn register_embedded_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| register_font(FONT, FontStyle::Normal, ttf_noto_sans::REGULAR).is_ok());
    if ok {
        Ok(())
    } else {
        Err(plot_error("the embedded font could not be read"))
    }
}

fn plot_error(what: impl std::fmt::Display) -> Error {
    Error::Asset {
        file: "benchmark plot".into(),
        what: what.to_string(),
    }
}

/// Colour of a (workload, path) series: one hue per workload and clip format (blue, orange, green,
/// purple, teal, red, brown, grey),
/// darkest for the GPU paths.
fn colour(workload_index: usize, path: PathKind) -> RGBColor {
    let shade = match path {
        PathKind::GpuStaged | PathKind::GpuFused => 0,
        PathKind::Cpu1 => 1,
        _ => 2,
    };
    const PALETTE: [[(u8, u8, u8); 3]; 8] = [
        [(31, 90, 180), (70, 150, 230), (120, 190, 250)],
        [(200, 80, 10), (240, 140, 40), (250, 190, 90)],
        [(30, 140, 60), (80, 190, 100), (150, 220, 150)],
        [(140, 40, 160), (190, 90, 210), (220, 150, 235)],
        [(0, 128, 128), (40, 180, 180), (120, 215, 215)],
        [(180, 20, 40), (225, 70, 90), (245, 140, 150)],
        [(120, 80, 30), (170, 120, 60), (210, 170, 110)],
        [(70, 70, 70), (130, 130, 130), (185, 185, 185)],
    ];
    let (r, g, b) = PALETTE[workload_index % PALETTE.len()][shade];
    RGBColor(r, g, b)
}

/// Line pattern of a path, (dash, gap) in pixels: solid (`None`) for gpu-staged, long dashes for
/// gpu-fused, medium dashes for cpu-1, dots for cpu-all.
fn dash(path: PathKind) -> Option<(u32, u32)> {
    match path {
        PathKind::GpuStaged => None,
        PathKind::GpuFused => Some((18, 5)),
        PathKind::Cpu1 => Some((8, 6)),
        _ => Some((3, 4)),
    }
}

/// 1, 2, 5 × powers of ten within `[lo, hi]`.
fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut e = lo.log10().floor() as i32 - 1;
    while 10f64.powi(e) <= hi * 10.0 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            if v >= lo * 0.999 && v <= hi * 1.001 {
                out.push(v);
            }
        }
        e += 1;
    }
    out
}

/// A tick label: `2K`, `1M` for character counts, `0.05`, `20` for milliseconds.
fn label(v: f64, thousands: bool) -> String {
    if thousands && v >= 1000.0 {
        let k = v / 1000.0;
        return if k >= 1000.0 {
            format!("{}M", k / 1000.0)
        } else {
            format!("{k}K")
        };
    }
    if v >= 1.0 {
        format!("{v}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').to_string()
    }
}

/// The rows grouped into lines, and the workloads' names (with the clip format) in order of first
/// appearance.
fn series(rows: &[Row]) -> (Vec<String>, Vec<Series>) {
    let mut workloads: Vec<String> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let name = format!("{} ({})", r.workload, r.clip_format);
        let wi = match workloads.iter().position(|w| *w == name) {
            Some(i) => i,
            None => {
                workloads.push(name);
                workloads.len() - 1
            }
        };
        let p = (f64::from(r.characters).max(1.0), r.headline_ms().max(1e-6));
        match series.iter_mut().find(|(w, path, _)| *w == wi && *path == r.path) {
            Some(s) => s.2.push(p),
            None => series.push((wi, r.path, vec![p])),
        }
    }
    for s in &mut series {
        s.2.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    (workloads, series)
}

/// A logarithmic axis range around `values` with some room on both sides, at least a factor of
/// four wide.
fn log_range(values: impl Iterator<Item = f64> + Clone, floor: f64, room: f64) -> (f64, f64) {
    let lo = values.clone().filter(|v| v.is_finite()).fold(f64::INFINITY, f64::min);
    let hi = values.filter(|v| v.is_finite()).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > 0.0 {
        (lo / room, hi * room)
    } else {
        (floor, floor * 10.0)
    };
    if hi / lo < 4.0 { (lo / 2.0, hi * 2.0) } else { (lo, hi) }
}

/// Draws one line with its path's pattern.
fn draw_line<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    points: Vec<(i32, i32)>,
    style: ShapeStyle,
    path: PathKind,
) -> Result<()> {
    match dash(path) {
        None => area.draw(&PathElement::new(points, style)),
        Some((on, off)) => area.draw(&DashedPathElement::new(points, on, off, style)),
    }
    .map_err(plot_error)
}

/// The chart of `rows` as tightly packed RGBA8 rows, top row first: for each workload and path,
/// frame time (GPU time when the row has timestamps, else wall-clock frame time) against
/// characters, both axes logarithmic, with a legend on the right.
pub fn draw(rows: &[Row], title: &str, width: u32, height: u32) -> Result<Vec<u8>> {
    check_size(width, height)?;
    register_embedded_font()?;
    let (workloads, series) = series(rows);
    let xs = series.iter().flat_map(|s| s.2.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.2.iter().map(|p| p.1));
    let (x_lo, x_hi) = log_range(xs, 100.0, 1.4);
    let (y_lo, y_hi) = log_range(ys, 0.1, 1.6);

    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let [root, plot_area, legend] = frame(&mut rgb, (width, height), title)?;

        let mut chart = chart_builder(&plot_area)
            .build_cartesian_2d(
                (x_lo..x_hi).log_scale().with_key_points(nice_ticks(x_lo, x_hi)),
                (y_lo..y_hi).log_scale().with_key_points(nice_ticks(y_lo, y_hi)),
            )
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("characters (log)")
            .y_desc("frame time, ms (log)")
            .x_label_formatter(&|v| label(*v, true))
            .y_label_formatter(&|v| label(*v, false))
            .label_style((FONT, 16).into_font().color(&INK))
            .axis_desc_style((FONT, 18).into_font().color(&INK))
            .axis_style(INK)
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()
            .map_err(plot_error)?;

        for (wi, path, pts) in &series {
            let style = colour(*wi, *path).stroke_width(3);
            match dash(*path) {
                None => chart.draw_series(LineSeries::new(pts.iter().copied(), style)),
                Some((on, off)) => chart.draw_series(DashedLineSeries::new(pts.iter().copied(), on, off, style)),
            }
            .map_err(plot_error)?;
            // A 9 × 9 pixel square on each measured point.
            let fill = colour(*wi, *path).filled();
            chart
                .draw_series(
                    pts.iter()
                        .map(|&p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], fill)),
                )
                .map_err(plot_error)?;
        }

        // Legend: each series' colour and line style, its workload and its path.
        let name_font = (FONT, 17).into_font().color(&INK);
        let path_font = (FONT, 15).into_font().color(&SUBTLE);
        // Rows of 46 pixels, closer together (down to 34) when the series would not fit.
        let room = legend.dim_in_pixel().1 as i32 - 14 - 50;
        let row = (room / series.len().max(1) as i32).clamp(34, 46);
        let mut y = 14;
        for (wi, path, _) in &series {
            let c = colour(*wi, *path);
            legend
                .draw(&Rectangle::new([(4, y + 2), (16, y + 14)], c.filled()))
                .map_err(plot_error)?;
            draw_line(&legend, vec![(24, y + 8), (62, y + 8)], c.stroke_width(3), *path)?;
            legend
                .draw(&Text::new(workloads[*wi].to_string(), (72, y - 2), name_font.clone()))
                .map_err(plot_error)?;
            legend
                .draw(&Text::new(path.name().to_string(), (72, y + 17), path_font.clone()))
                .map_err(plot_error)?;
            y += row;
        }
        for line in ["GPU time, or frame time", "without timestamps"] {
            legend
                .draw(&Text::new(line.to_string(), (4, y + 6), path_font.clone()))
                .map_err(plot_error)?;
            y += 20;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(opaque_rgba(&rgb))
}

/// A line of [`draw_curves`]: its name in the legend, its colour, whether it is dashed, its
/// points.
#[derive(Clone, Debug)]
pub struct Curve {
    /// The legend's text.
    pub name: String,
    /// Its colour, RGB.
    pub colour: [u8; 3],
    /// Drawn dashed (a reference line) rather than solid.
    pub dashed: bool,
    /// `(x, y)` points in order.
    pub points: Vec<(f64, f64)>,
}

/// A chart of `curves` on linear axes described by `x_desc` and `y_desc`, with a legend on the
/// right, as tightly packed RGBA8 rows, top row first (as [`draw`]).
///
/// Errors: a size too small for the chart, no point, a point that is not finite.
pub fn draw_curves(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    curves: &[Curve],
    width: u32,
    height: u32,
) -> Result<Vec<u8>> {
    check_size(width, height)?;
    let points = || curves.iter().flat_map(|c| c.points.iter().copied());
    if points().next().is_none() || points().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return Err(plot_error("the curves need points, all of them finite"));
    }
    register_embedded_font()?;
    let range = |v: Vec<f64>| {
        let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        let pad = ((hi - lo) * 0.05).max(1e-9);
        (lo - pad, hi + pad)
    };
    let (x_lo, x_hi) = range(points().map(|p| p.0).collect());
    let (y_lo, y_hi) = range(points().map(|p| p.1).collect());
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let [root, plot_area, legend] = frame(&mut rgb, (width, height), title)?;
        let mut chart = chart_builder(&plot_area)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style((FONT, 16).into_font().color(&INK))
            .axis_desc_style((FONT, 18).into_font().color(&INK))
            .axis_style(INK)
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()
            .map_err(plot_error)?;
        let name_font = (FONT, 17).into_font().color(&INK);
        let mut y = 14;
        for c in curves {
            let colour = RGBColor(c.colour[0], c.colour[1], c.colour[2]);
            let style = colour.stroke_width(3);
            let pts = c.points.iter().copied();
            if c.dashed {
                chart.draw_series(DashedLineSeries::new(pts, 10, 7, style))
            } else {
                chart.draw_series(LineSeries::new(pts, style))
            }
            .map_err(plot_error)?;
            let sample: Vec<(i32, i32)> = vec![(4, y + 8), (52, y + 8)];
            if c.dashed {
                legend.draw(&DashedPathElement::new(sample, 10, 7, style))
            } else {
                legend.draw(&PathElement::new(sample, style))
            }
            .map_err(plot_error)?;
            legend
                .draw(&Text::new(c.name.clone(), (62, y - 2), name_font.clone()))
                .map_err(plot_error)?;
            y += 34;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(opaque_rgba(&rgb))
}

/// A chart's frame on `rgb` (`size` pixels): filled white, `title` at the top; returns the whole
/// area, the plot's area and the legend's column on the right.
fn frame<'a>(
    rgb: &'a mut [u8],
    size: (u32, u32),
    title: &str,
) -> Result<[DrawingArea<Canvas<'a>, plotters::coord::Shift>; 3]> {
    let font = FontRef::try_from_slice(ttf_noto_sans::REGULAR).map_err(plot_error)?;
    let root = Canvas {
        inner: BitMapBackend::with_buffer(rgb, size),
        font,
    }
    .into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let (title_area, body) = root.split_vertically(44);
    title_area
        .draw(&Text::new(
            title.to_string(),
            (20, 12),
            (FONT, 22).into_font().color(&INK),
        ))
        .map_err(plot_error)?;
    let (plot_area, legend) = body.split_horizontally(size.0 - LEGEND_WIDTH);
    Ok([root, plot_area, legend])
}

/// A chart builder on `area` with the margins and label areas both charts use.
fn chart_builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder
        .margin_left(12)
        .margin_right(24)
        .margin_bottom(12)
        .x_label_area_size(56)
        .y_label_area_size(76);
    builder
}

/// Refuses a chart too small for its axes and legend.
fn check_size(width: u32, height: u32) -> Result<()> {
    if width <= LEGEND_WIDTH + 200 || height < 200 {
        return Err(plot_error(format!(
            "{width}x{height} is too small for the chart (at least {}x200 pixels)",
            LEGEND_WIDTH + 201
        )));
    }
    Ok(())
}

/// RGB8 pixels as opaque RGBA8.
fn opaque_rgba(rgb: &[u8]) -> Vec<u8> {
    rgb.chunks_exact(3).flat_map(|px| [px[0], px[1], px[2], 255]).collect()
}

/// Draws [`draw`]'s chart at 1100×640 and saves it as a PNG.
pub fn save(path: &Path, rows: &[Row], title: &str) -> Result<()> {
    let (w, h) = (1100, 640);
    crate::image::save_png(path, w, h, &draw(rows, title, w, h)?)
}
