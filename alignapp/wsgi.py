import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
application = get_wsgi_application()

from alignapp.warm import warm_up  # noqa: E402 - after Django is set up

warm_up()  # the URL configuration and the aligners' registry, before the first request (alignapp/warm.py)
