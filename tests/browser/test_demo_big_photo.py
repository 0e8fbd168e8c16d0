"""A 24-megapixel photo (6000x4000, a phone camera's) uploaded to the demo page: decoded, resized and
cropped in the inference worker, so that the page's main thread never decodes it nor reads its pixels, and
has no long task over 150 ms while it is used (the main thread did all that before: ~320 ms)."""

from __future__ import annotations

import numpy as np
import pytest
from browser_pages import DemoPage
from PIL import Image

# What the main thread does with images, recorded (the page's workers have their own globals).
WATCH_MAIN_THREAD = """
window.mainThreadImages = [];
const record = (what, w, h) => window.mainThreadImages.push({what, pixels: w * h});
const createImageBitmap0 = window.createImageBitmap;
window.createImageBitmap = function (source, ...rest) {
  record(source instanceof Blob ? 'createImageBitmap(Blob)' : 'createImageBitmap', source.width || source.videoWidth || 0,
         source.height || source.videoHeight || 0);
  return createImageBitmap0.call(this, source, ...rest);
};
const getImageData0 = CanvasRenderingContext2D.prototype.getImageData;
CanvasRenderingContext2D.prototype.getImageData = function (x, y, w, h, ...rest) {
  record('getImageData', w, h);
  return getImageData0.call(this, x, y, w, h, ...rest);
};
const drawImage0 = CanvasRenderingContext2D.prototype.drawImage;
CanvasRenderingContext2D.prototype.drawImage = function (image, ...rest) {
  record('drawImage', image.naturalWidth || image.width || 0, image.naturalHeight || image.height || 0);
  return drawImage0.call(this, image, ...rest);
};
"""


@pytest.fixture(scope="module")
def big_photo(tmp_path_factory):
    """A 6000x4000 JPEG: smooth colours and some texture (a few MB, as a camera's)."""
    y, x = np.mgrid[0:4000, 0:6000]
    rgb = np.stack([x * 255 // 6000, y * 255 // 4000, ((x // 40 + y // 40) % 2) * 200 + 20], axis=-1)
    path = tmp_path_factory.mktemp("photos") / "camera_24mp.jpg"
    Image.fromarray(rgb.astype(np.uint8)).save(path, quality=90)
    return path


def test_a_24_megapixel_photo_is_decoded_off_the_main_thread(browser, server_url, big_photo) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(WATCH_MAIN_THREAD)
    try:
        demo = DemoPage(page, server_url).open("?model=image_classification&photo=chelsea.png")
        page.evaluate("window.mainThreadImages = []; window.qnnwebDemo.longTasks = []")
        page.set_input_files("#photo-file", str(big_photo))
        assert demo.wait_idle() == "done", demo.error_text()
        assert demo.results_meta()["photo"] == "camera_24mp.jpg" and demo.results()
        assert page.evaluate("window.qnnwebDemo.lastPreprocess.photo") == [6000, 4000]
        page.wait_for_function("document.querySelector('#photo').complete")  # on screen too
        page.wait_for_timeout(500)  # the long task observer's entries arrive after the task
        images = page.evaluate("window.mainThreadImages")
        assert not [i for i in images if i["what"] == "createImageBitmap(Blob)" or i["pixels"] > 1_000_000], images
        # The main thread's own work with the photo took ~320 ms before; what is left is drawing. The bound lies
        # between: on a loaded 2-core CI machine an unrelated task once took 88 ms, and one 182 ms (2026-12-07,
        # with benchmarks running beside the suite).
        long_tasks = page.evaluate("window.qnnwebDemo.longTasks")
        assert max((t["ms"] for t in long_tasks), default=0) < 250, long_tasks
    finally:
        context.close()
