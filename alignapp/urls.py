from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("annotation.urls")),
]

# 403.html and 404.html (frontend/templates) are found by Django's default handlers.
handler500 = "annotation.views.errors.server_error"
