# One image for web and workers. GPU workers run the same image on a host with the NVIDIA
# container toolkit; torch uses CUDA when the device is visible (install a CUDA torch build there).

# Browser libraries (charts) from npm, pinned by package-lock.json.
FROM node:20-slim AS assets
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error \
 && mkdir -p vendor \
 && cp node_modules/chart.js/dist/chart.umd.min.js vendor/ \
 && cp node_modules/@sgratzl/chartjs-chart-boxplot/build/index.umd.min.js vendor/chartjs-chart-boxplot.umd.min.js

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
COPY --from=assets /src/vendor frontend/static/vendor
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "alignapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
