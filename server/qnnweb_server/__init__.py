"""qnnweb-server: serves the qnnweb demo page, Pyodide, the qnnweb wheels and the models.

    python -m qnnweb_server --host 127.0.0.1 --port 8000 --data-dir ./data
"""

from qnnweb_server.core.config import Settings, get_settings
from qnnweb_server.main import create_app

__all__ = ["Settings", "create_app", "get_settings"]
__version__ = "0.1.0"
